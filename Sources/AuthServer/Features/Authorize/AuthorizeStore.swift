import Foundation
import OIDC
import Postgres

extension OAuthStore {
    // MARK: - Pending authorization requests

    /// Remembers when a request first arrived (for `prompt=login` and `max_age`).
    static func rememberRequest(parametersDigest: [UInt8], on db: some SQLExecutor) throws -> UUID {
        let id = UUID.random()
        try db.query(
            """
            INSERT INTO authorization_requests (id, parameters_digest, expires_at)
            VALUES (\(id), \(parametersDigest), now() + interval '1 hour')
            """)
        return id
    }

    /// When the request with this id and these parameters arrived; nil when unknown or expired.
    static func requestReceivedAt(id: UUID, parametersDigest: [UInt8], on db: some SQLExecutor) throws
        -> Date?
    {
        try db.query(
            """
            SELECT received_at FROM authorization_requests
            WHERE id = \(id) AND parameters_digest = \(parametersDigest) AND expires_at > now()
            """
        ).first.map { try $0.decode("received_at") }
    }

    // Asynchronous commits. Some statements below end with
    // `FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit`: run on
    // their own (autocommit), their commit then returns before its WAL record is flushed to
    // disk, which saves a disk flush per request. Only for rows whose loss in a PostgreSQL
    // crash fails safe: the access-token record of client_credentials (a token without its
    // record is refused by /userinfo and /introspect), and a new authorization code with its
    // session-client row (a lost code cannot have been redeemed, because redeeming commits
    // durably and so flushes the WAL before it). Never for consuming one-time values or
    // rotating refresh tokens.

    // MARK: - Authorization codes

    /// Stores a new authorization code and adds its client to the session's client list
    /// (for logout), in one statement that commits without waiting for the disk (see above).
    static func insertCode(
        _ code: String, issued: IssuedAuthorizationCode, accountID: UUID, sessionID: UUID,
        lifetimeSeconds: Int, backchannelLogoutURI: String?,
        on db: some SQLExecutor
    ) throws {
        try db.query(
            """
            WITH code AS (
                INSERT INTO authorization_codes
                    (id, code_digest, client_id, redirect_uri, code_challenge, nonce, scopes, id_token_claims,
                     account_id, session_id, auth_time, amr, expires_at)
                VALUES (\(UUID.random()), \(digest(code)), \(issued.clientID), \(issued.redirectURI), \(issued.codeChallenge),
                        \(issued.nonce), \(issued.scopes), \(issued.idTokenClaims.sorted()), \(accountID), \(sessionID),
                        \(issued.authTime), \(issued.amr), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            ), session_client AS (
                INSERT INTO session_clients (session_id, client_id, account_id, backchannel_logout_uri)
                VALUES (\(sessionID), \(issued.clientID), \(accountID), \(backchannelLogoutURI))
                ON CONFLICT (session_id, client_id) DO NOTHING
            ), session_client_uri AS (
                -- The row usually exists already, unchanged. DO UPDATE would lock it even then,
                -- queueing concurrent requests of one session; an UPDATE whose WHERE matches
                -- nothing locks nothing.
                UPDATE session_clients SET backchannel_logout_uri = \(backchannelLogoutURI)
                WHERE session_id = \(sessionID) AND client_id = \(issued.clientID)
                  AND backchannel_logout_uri IS DISTINCT FROM \(backchannelLogoutURI)::text
            )
            SELECT setting FROM (SELECT set_config('synchronous_commit', 'off', true) AS setting) AS async_commit
            """)
    }

    // MARK: - Consents

    /// Records consent, widening an earlier grant by the new scopes.
    static func grantConsent(accountID: UUID, clientID: String, scopes: [String], on db: some SQLExecutor)
        throws
    {
        try db.query(
            """
            INSERT INTO consents (account_id, client_id, scopes) VALUES (\(accountID), \(clientID), \(scopes))
            ON CONFLICT (account_id, client_id) DO UPDATE
            SET scopes = ARRAY(SELECT DISTINCT unnest(consents.scopes || EXCLUDED.scopes)), updated_at = now()
            """)
    }
}
