import Foundation
import OIDC
import Postgres

/// What `AuthorizeFlow` stores and reads. Every operation is one autocommit statement on
/// purpose (no transaction): the code insert commits asynchronously, which only a statement
/// of its own can do, and nothing here has to be undone together. The one exception is a
/// pushed request's code: consuming the request and storing the code belong together.
protocol AuthorizeStore: Sendable {
    /// The browser session named by the cookie token (if live), the database's time, and the
    /// scopes its account consented to for `clientID`, in one round trip.
    func lookUp(sessionToken: String?, clientID: String) throws -> SessionStore.Lookup
    /// When the remembered request `id` with these parameters arrived; nil when unknown or
    /// expired.
    func requestReceivedAt(id: UUID, parametersDigest: [UInt8]) throws -> Date?
    /// Remembers that a request with these parameters arrived now (kept for an hour).
    func rememberRequest(id: UUID, parametersDigest: [UInt8]) throws
    /// Records consent, widening an earlier grant by the new scopes.
    func grantConsent(accountID: UUID, clientID: String, scopes: [String]) throws
    /// Stores a new authorization code and adds its client to the session's client list.
    func insertCode(_ code: NewAuthorizationCode) throws
    /// The account's email address for the consent page; nil when the account is gone.
    func accountEmail(_ accountID: UUID) throws -> String?
    /// The browser's live accounts (see `BrowserSessions`), the current one first.
    func browserAccounts(_ browser: BrowserSessions) throws -> [BrowserAccount]
    /// The pushed request (RFC 9126) with this reference digest, pushed by `clientID`; nil when
    /// there is none. Its first use starts the sign-in window: the expiry moves to
    /// `interactionSeconds` from now and the request is bound to `browserDigest` (only while
    /// it is still live and unused).
    func pushedRequest(
        referenceDigest: [UInt8], clientID: String, interactionSeconds: Int, browserDigest: [UInt8]
    ) throws -> StoredPushedRequest?
    /// Stores the code and consumes what the request may be used for once (a pushed request,
    /// a request object's `jti`) in one transaction; false (and nothing stored) when one of
    /// them was used meanwhile.
    func insertCode(_ code: NewAuthorizationCode, consuming: OneTimeRequest) throws -> Bool
}

/// A pushed authorization request as /authorize finds it.
struct StoredPushedRequest: Sendable {
    /// The pushed parameters, form-encoded.
    var parameters: String
    /// Not expired and not consumed.
    var live: Bool
    /// The parameters came from a verified request object.
    var requestObjectSigned: Bool
    /// Used now by the browser it is bound to (or by its first browser).
    var sameBrowser: Bool
}

/// What an authorization request may yield one code for: its pushed request (RFC 9126 §4),
/// and its request object's `jti` (RFC 9101 §10.1).
struct OneTimeRequest: Sendable {
    var pushedReferenceDigest: [UInt8]?
    var requestObjectID: (clientID: String, jti: String, expiresAt: Date)?

    var isEmpty: Bool { pushedReferenceDigest == nil && requestObjectID == nil }
}

/// An authorization code about to be stored: the secret (only its digest is stored) and
/// what redeeming it yields.
struct NewAuthorizationCode: Sendable {
    var id: UUID
    var code: String
    var issued: IssuedAuthorizationCode
    var accountID: UUID
    var sessionID: UUID
    var lifetimeSeconds: Int
    /// The client's current back-channel logout URI, kept on the session's client-list row.
    var backchannelLogoutURI: String?
    /// Claims requested for the userinfo response through `claims` (Core §5.5), handed on
    /// to the refresh-token family and the access tokens.
    var userinfoClaims: Set<String> = []
}

struct PostgresAuthorizeStore: AuthorizeStore {
    let db: any SQLExecutor & Sendable
    let sessions: SessionStore

    func lookUp(sessionToken: String?, clientID: String) throws -> SessionStore.Lookup {
        try sessions.lookUp(token: sessionToken, consentClientID: clientID)
    }

    func requestReceivedAt(id: UUID, parametersDigest: [UInt8]) throws -> Date? {
        try db.query(
            """
            SELECT received_at FROM authorization_requests
            WHERE id = \(id) AND parameters_digest = \(parametersDigest) AND expires_at > now()
            """
        ).first.map { try $0.decode("received_at") }
    }

    func rememberRequest(id: UUID, parametersDigest: [UInt8]) throws {
        try db.query(
            """
            INSERT INTO authorization_requests (id, parameters_digest, expires_at)
            VALUES (\(id), \(parametersDigest), now() + interval '1 hour')
            """)
    }

    func grantConsent(accountID: UUID, clientID: String, scopes: [String]) throws {
        try db.query(
            """
            INSERT INTO consents (account_id, client_id, scopes) VALUES (\(accountID), \(clientID), \(scopes))
            ON CONFLICT (account_id, client_id) DO UPDATE
            SET scopes = ARRAY(SELECT DISTINCT unnest(consents.scopes || EXCLUDED.scopes)), updated_at = now()
            """)
    }

    /// One statement that commits without waiting for the disk. If a PostgreSQL crash loses
    /// it, the code was never redeemed: redeeming commits durably, and that flush covers
    /// every earlier WAL record, this one included. So a client that holds tokens always has
    /// its client-list row (back-channel logout depends on it), and a lost code only fails
    /// safe with `invalid_grant`.
    func insertCode(_ new: NewAuthorizationCode) throws { try Self.insertCode(new, on: db) }

    static func insertCode(_ new: NewAuthorizationCode, on db: some SQLExecutor) throws {
        let issued = new.issued
        let uri = new.backchannelLogoutURI
        try db.query(
            """
            WITH code AS (
                INSERT INTO authorization_codes
                    (id, code_digest, client_id, redirect_uri, code_challenge, nonce, scopes, id_token_claims,
                     userinfo_claims, account_id, session_id, auth_time, amr, expires_at, resources, dpop_jkt)
                VALUES (\(new.id), \(TimeOrderedToken.key(new.code)), \(issued.clientID), \(issued.redirectURI),
                        \(issued.codeChallenge), \(issued.nonce), \(issued.scopes), \(issued.idTokenClaims.sorted()),
                        \(new.userinfoClaims.sorted()),
                        \(new.accountID), \(new.sessionID), \(issued.authTime), \(issued.amr),
                        now() + make_interval(secs => \(new.lifetimeSeconds)::float8), \(issued.resources),
                        \(issued.dpopJKT))
            ), session_client AS (
                INSERT INTO session_clients (session_id, client_id, account_id, backchannel_logout_uri)
                VALUES (\(new.sessionID), \(issued.clientID), \(new.accountID), \(uri))
                ON CONFLICT (session_id, client_id) DO NOTHING
            ), session_client_uri AS (
                -- The row usually exists already, unchanged. DO UPDATE would lock it even then,
                -- queueing concurrent requests of one session; an UPDATE whose WHERE matches
                -- nothing locks nothing.
                UPDATE session_clients SET backchannel_logout_uri = \(uri)
                WHERE session_id = \(new.sessionID) AND client_id = \(issued.clientID)
                  AND backchannel_logout_uri IS DISTINCT FROM \(uri)::text
            )
            SELECT * FROM \(.asynchronousCommit)
            """)
    }

    func pushedRequest(
        referenceDigest: [UInt8], clientID: String, interactionSeconds: Int, browserDigest: [UInt8]
    ) throws -> StoredPushedRequest? {
        // The SELECT sees the row as it was before the UPDATE of the same statement: a row
        // claimed now was live and bound to no browser yet.
        try db.query(
            """
            WITH claimed AS (
                UPDATE pushed_authorization_requests
                SET first_used_at = now(), browser_digest = \(browserDigest),
                    expires_at = greatest(expires_at, now() + make_interval(secs => \(interactionSeconds)::float8))
                WHERE reference_digest = \(referenceDigest) AND client_id = \(clientID)
                  AND first_used_at IS NULL AND consumed_at IS NULL AND expires_at > now()
                RETURNING reference_digest
            )
            SELECT parameters, (consumed_at IS NULL AND expires_at > now()) AS live, request_object_signed,
                   (browser_digest IS NULL OR browser_digest = \(browserDigest)) AS same_browser
            FROM pushed_authorization_requests
            WHERE reference_digest = \(referenceDigest) AND client_id = \(clientID)
            """
        ).first.map { row in
            StoredPushedRequest(
                parameters: try row.decode("parameters"), live: try row.decode("live"),
                requestObjectSigned: try row.decode("request_object_signed"),
                sameBrowser: try row.decode("same_browser"))
        }
    }

    func insertCode(_ code: NewAuthorizationCode, consuming once: OneTimeRequest) throws -> Bool {
        try db.transaction { connection in
            if let digest = once.pushedReferenceDigest {
                let consumed = try connection.query(
                    """
                    UPDATE pushed_authorization_requests SET consumed_at = now()
                    WHERE reference_digest = \(digest) AND consumed_at IS NULL AND expires_at > now()
                    RETURNING reference_digest
                    """)
                guard consumed.first != nil else { return false }
            }
            if let object = once.requestObjectID {
                guard
                    try RequestObjects.recordID(
                        clientID: object.clientID, jti: object.jti, expiresAt: object.expiresAt,
                        on: connection)
                else { return false }
            }
            try Self.insertCode(code, on: connection)
            return true
        }
    }

    func browserAccounts(_ browser: BrowserSessions) throws -> [BrowserAccount] {
        try sessions.accounts(of: browser)
    }

    func accountEmail(_ accountID: UUID) throws -> String? {
        try AccountStore.summary(accountID: accountID, on: db)?.email
    }
}
