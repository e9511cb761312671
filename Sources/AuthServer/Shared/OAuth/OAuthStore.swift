import Crypto
import Foundation
import OIDC
import Postgres

/// SQL for the OAuth state. Codes and refresh tokens are stored as SHA-256 digests; each
/// one-time value is consumed by a single conditional UPDATE, so racing instances cannot
/// both succeed.
enum OAuthStore {
    static func digest(_ secret: String) -> [UInt8] { SHA256.hash(data: Array(secret.utf8)).bytes }

    // MARK: - Authorization codes

    enum CodeRedemption {
        /// `now` is the transaction's time; `accountDisabled` refuses codes of an account an
        /// operator disabled after they were issued, `sessionEnded` codes whose browser session
        /// ended since (what they would issue would escape the tokens the session's end revoked).
        case fresh(
            id: UUID, code: IssuedAuthorizationCode, now: Date, accountDisabled: Bool, sessionEnded: Bool)
        /// The code was already used: everything issued from it must be revoked.
        case replayed(id: UUID)
        case unknown
    }

    /// Consumes a code with one conditional UPDATE; a second attempt finds it consumed. The
    /// code's session row is share-locked until the caller's transaction ends, so a logout
    /// either waits for what the code issues (and its trigger revokes it) or is seen here.
    static func consumeCode(_ code: String, on db: some SQLExecutor) throws -> CodeRedemption {
        let codeDigest = digest(code)
        let rows = try db.query(
            """
            WITH session AS (
                SELECT s.revoked_at FROM authentication_sessions s
                WHERE s.id = (SELECT c.session_id FROM authorization_codes c
                              WHERE c.code_digest = \(codeDigest) AND c.consumed_at IS NULL)
                FOR SHARE
            )
            UPDATE authorization_codes SET consumed_at = now()
            WHERE code_digest = \(codeDigest) AND consumed_at IS NULL
            RETURNING id, client_id, redirect_uri, code_challenge, nonce, scopes, id_token_claims, account_id,
                      session_id, auth_time, amr, expires_at, now() AS now,
                      (SELECT a.disabled_at IS NOT NULL FROM accounts a
                       WHERE a.id = authorization_codes.account_id) AS account_disabled,
                      (SELECT revoked_at IS NOT NULL FROM session) AS session_ended
            """)
        if let row = rows.first {
            let accountID: UUID = try row.decode("account_id")
            let sessionID: UUID? = try row.decode("session_id")
            let claims: [String] = try row.decode("id_token_claims")
            return .fresh(
                id: try row.decode("id"),
                code: IssuedAuthorizationCode(
                    clientID: try row.decode("client_id"), redirectURI: try row.decode("redirect_uri"),
                    codeChallenge: try row.decode("code_challenge"), scopes: try row.decode("scopes"),
                    nonce: try row.decode("nonce"), accountID: accountID.uuidString.lowercased(),
                    authTime: try row.decode("auth_time"), amr: try row.decode("amr"),
                    sessionID: sessionID?.uuidString.lowercased(), idTokenClaims: Set(claims),
                    expiresAt: try row.decode("expires_at")),
                now: try row.decode("now"),
                accountDisabled: try row.decode("account_disabled", as: Bool?.self) ?? true,
                sessionEnded: try row.decode("session_ended", as: Bool?.self) ?? false)
        }
        if let row = try db.query("SELECT id FROM authorization_codes WHERE code_digest = \(codeDigest)")
            .first
        {
            return .replayed(id: try row.decode("id"))
        }
        return .unknown
    }

    /// The account a code was issued for (for the audit event of a replay).
    static func codeAccount(_ codeID: UUID, on db: some SQLExecutor) throws -> UUID? {
        try db.query("SELECT account_id FROM authorization_codes WHERE id = \(codeID)").first?.decode(
            "account_id")
    }

    static func familyAccount(_ familyID: UUID, on db: some SQLExecutor) throws -> UUID? {
        try db.query("SELECT account_id FROM refresh_token_families WHERE id = \(familyID)").first?.decode(
            "account_id")
    }

    /// Revokes the refresh-token families and access tokens issued from a code.
    static func revokeIssuedFromCode(_ codeID: UUID, on db: some SQLExecutor) throws {
        try db.query(
            """
            UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = 'code_replay'
            WHERE authorization_code_id = \(codeID) AND revoked_at IS NULL
            """)
        try db.query(
            """
            UPDATE access_tokens SET revoked_at = now()
            WHERE revoked_at IS NULL AND (authorization_code_id = \(codeID)
               OR family_id IN (SELECT id FROM refresh_token_families WHERE authorization_code_id = \(codeID)))
            """)
    }

    // MARK: - Refresh tokens

    struct RefreshGrant: Sendable {
        var familyID: UUID
        var clientID: String
        var accountID: UUID
        var sessionID: UUID?
        var scopes: [String]
        var authTime: Date
        var amr: [String]
    }

    /// Records what a code or refresh grant issues, in one statement: the refresh-token family
    /// (`createFamily`, for a code's first refresh token), the refresh token (its idle deadline
    /// never passes the family's absolute one), and the access token's record. Both carry the
    /// browser session, so that ending it revokes them (migration 0011's trigger) unless the
    /// family was granted `offline_access`.
    static func recordIssued(
        _ grant: RefreshGrant, createFamily: Bool, refreshToken: String?, accessTokenID jti: String,
        accessExpiresAt: Date, codeID: UUID?, absoluteSeconds: Int, idleSeconds: Int,
        on db: some SQLExecutor
    ) throws {
        let refreshDigest = refreshToken.map(digest)
        try db.query(
            """
            WITH family AS (
                INSERT INTO refresh_token_families
                    (id, client_id, account_id, session_id, authorization_code_id, scopes, auth_time, amr, absolute_expires_at)
                SELECT \(grant.familyID), \(grant.clientID), \(grant.accountID), \(grant.sessionID), \(codeID),
                       \(grant.scopes), \(grant.authTime), \(grant.amr), now() + make_interval(secs => \(absoluteSeconds)::float8)
                WHERE \(createFamily)
                RETURNING id, absolute_expires_at
            ), refresh AS (
                INSERT INTO refresh_tokens (token_digest, family_id, expires_at)
                SELECT \(refreshDigest), f.id, LEAST(now() + make_interval(secs => \(idleSeconds)::float8), f.absolute_expires_at)
                FROM (SELECT id, absolute_expires_at FROM family
                      UNION ALL
                      SELECT id, absolute_expires_at FROM refresh_token_families
                      WHERE id = \(grant.familyID) AND NOT \(createFamily)) AS f
                WHERE \(refreshDigest)::bytea IS NOT NULL
            )
            INSERT INTO access_tokens
                (jti, client_id, account_id, family_id, authorization_code_id, session_id, scopes, expires_at)
            VALUES (\(jti), \(grant.clientID), \(grant.accountID), \(refreshToken == nil ? nil : grant.familyID), \(codeID),
                    \(grant.sessionID), \(grant.scopes), \(accessExpiresAt))
            """)
    }

    enum RefreshRotation {
        /// `now` is the transaction's time.
        case rotated(RefreshGrant, now: Date)
        /// A token that was already rotated came back: its family is now revoked.
        case reused(familyID: UUID, clientID: String)
        case invalid(reason: String)
    }

    /// Marks a refresh token used (in the caller's transaction). A live family's live token
    /// rotates; a rotated token revokes the family. Disabling an account revokes its families,
    /// so a disabled account's token is never live.
    static func rotateRefreshToken(_ token: String, on db: some SQLExecutor) throws -> RefreshRotation {
        let tokenDigest = digest(token)
        let rows = try db.query(
            """
            UPDATE refresh_tokens t SET rotated_at = now()
            FROM refresh_token_families f
            WHERE t.token_digest = \(tokenDigest) AND t.rotated_at IS NULL AND f.id = t.family_id
            RETURNING f.id, f.client_id, f.account_id, f.session_id, f.scopes, f.auth_time, f.amr,
                      (f.revoked_at IS NULL AND f.absolute_expires_at > now() AND t.expires_at > now()) AS live,
                      now() AS now
            """)
        if let row = rows.first {
            let grant = RefreshGrant(
                familyID: try row.decode("id"), clientID: try row.decode("client_id"),
                accountID: try row.decode("account_id"), sessionID: try row.decode("session_id"),
                scopes: try row.decode("scopes"), authTime: try row.decode("auth_time"),
                amr: try row.decode("amr"))
            guard try row.decode("live", as: Bool.self) else { return .invalid(reason: "expired or revoked") }
            return .rotated(grant, now: try row.decode("now"))
        }
        let used = try db.query(
            """
            SELECT f.id, f.client_id FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id
            WHERE t.token_digest = \(tokenDigest)
            """)
        guard let row = used.first else { return .invalid(reason: "unknown") }
        return .reused(familyID: try row.decode("id"), clientID: try row.decode("client_id"))
    }

    static func revokeFamily(_ familyID: UUID, reason: String, on db: some SQLExecutor) throws {
        try db.query(
            """
            UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = \(reason)
            WHERE id = \(familyID) AND revoked_at IS NULL
            """)
        try db.query(
            "UPDATE access_tokens SET revoked_at = now() WHERE family_id = \(familyID) AND revoked_at IS NULL"
        )
    }

    /// Revokes every refresh-token family and access token of the account (disabled, password
    /// changed or removed, recovered, signed out everywhere); `reason` goes to the families.
    static func revokeAllTokens(accountID: UUID, reason: String, on db: some SQLExecutor) throws {
        try db.query(
            """
            UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = \(reason)
            WHERE account_id = \(accountID) AND revoked_at IS NULL
            """)
        try db.query(
            "UPDATE access_tokens SET revoked_at = now() WHERE account_id = \(accountID) AND revoked_at IS NULL"
        )
    }

    /// The live family of a refresh token (for revocation and introspection), without using it.
    static func refreshTokenInfo(_ token: String, on db: some SQLExecutor) throws -> (
        grant: RefreshGrant, expiresAt: Date, issuedAt: Date, live: Bool
    )? {
        let rows = try db.query(
            """
            SELECT f.id, f.client_id, f.account_id, f.session_id, f.scopes, f.auth_time, f.amr, t.expires_at, t.created_at,
                   (t.rotated_at IS NULL AND f.revoked_at IS NULL AND f.absolute_expires_at > now() AND t.expires_at > now()) AS live
            FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id
            WHERE t.token_digest = \(digest(token))
            """)
        guard let row = rows.first else { return nil }
        return (
            RefreshGrant(
                familyID: try row.decode("id"), clientID: try row.decode("client_id"),
                accountID: try row.decode("account_id"), sessionID: try row.decode("session_id"),
                scopes: try row.decode("scopes"), authTime: try row.decode("auth_time"),
                amr: try row.decode("amr")),
            try row.decode("expires_at"), try row.decode("created_at"), try row.decode("live")
        )
    }

    // MARK: - Access tokens

    /// Records a client_credentials access token, committing without waiting for the disk (see
    /// above), and returns the statement's time, from which the token's claims are built.
    static func recordClientAccessToken(
        jti: String, clientID: String, scopes: [String], lifetimeSeconds: Int, on db: some SQLExecutor
    ) throws -> Date {
        let row = try db.query(
            """
            INSERT INTO access_tokens (jti, client_id, scopes, expires_at)
            SELECT \(jti), \(clientID), \(scopes), now() + make_interval(secs => \(lifetimeSeconds)::float8)
            FROM \(.asynchronousCommit)
            RETURNING now() AS now
            """
        ).first
        guard let row else { throw PostgresError(kind: .other, detail: "INSERT … RETURNING returned no row") }
        return try row.decode("now")
    }

    /// Whether an access token's `jti` was issued here and is neither revoked nor expired.
    static func accessTokenIsLive(jti: String, on db: some SQLExecutor) throws -> Bool {
        try db.query(
            "SELECT 1 AS one FROM access_tokens WHERE jti = \(jti) AND revoked_at IS NULL AND expires_at > now()"
        ).first != nil
    }

    static func revokeAccessToken(jti: String, clientID: String, on db: some SQLExecutor) throws {
        try db.query(
            "UPDATE access_tokens SET revoked_at = now() WHERE jti = \(jti) AND client_id = \(clientID) AND revoked_at IS NULL"
        )
    }

    // MARK: - Client assertions

    /// Records a `private_key_jwt` assertion id; false when it was used before.
    static func recordAssertion(clientID: String, jti: String, expiresAt: Date, on db: some SQLExecutor)
        throws -> Bool
    {
        try db.query("DELETE FROM client_assertion_ids WHERE expires_at < now() - interval '5 minutes'")
        return try db.query(
            """
            INSERT INTO client_assertion_ids (client_id, jti, expires_at) VALUES (\(clientID), \(jti), \(expiresAt))
            ON CONFLICT DO NOTHING
            """
        ).affectedRows == 1
    }
}
