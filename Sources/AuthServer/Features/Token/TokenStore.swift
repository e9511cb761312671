import Foundation
import OIDC
import Postgres

/// What the token endpoint reads and writes: one-time codes, refresh-token rotation, the
/// record of what it issued, the claims an ID token carries, and its audit events.
protocol TokenStore {
    /// Runs `body` in one transaction, with a store that uses only that transaction, and
    /// `whileCommitting` on its value while the `COMMIT` is under way; that value comes back
    /// only if the commit succeeded (`SQLExecutor.transaction(_:whileCommitting:)`).
    func transaction<T, U>(_ body: (any TokenStore) throws -> T, whileCommitting: (T) throws -> U) throws -> U

    /// Consumes a code: the first use finds it fresh, a second one finds it replayed.
    func consumeCode(_ code: String) throws -> CodeRedemption
    /// Revokes the refresh-token families and access tokens issued from a code.
    func revokeIssuedFromCode(_ codeID: UUID) throws

    /// Marks a refresh token used: a live one rotates, a rotated one is reported as reused.
    /// With `rotate` false (`RefreshTokenIssuance.kept`) a live token stays usable and only its
    /// idle expiry moves (by `idleSeconds`, within the family's end).
    /// `proof`: the request's DPoP proof, recorded in the same statement (RFC 9449 §11.1).
    func rotateRefreshToken(_ token: String, proof: DPoPProof?, rotate: Bool, idleSeconds: Int) throws
        -> RefreshRotation
    /// Revokes a refresh-token family and its access tokens.
    func revokeFamily(_ familyID: UUID, reason: String) throws

    /// Records what a code or refresh grant issued (see `IssuedTokens`).
    func recordIssued(_ issued: IssuedTokens) throws
    /// Records an opaque client_credentials access token (a JWT one has no record).
    /// `audience` is the API's identifier (nil: this server).
    func recordClientAccessToken(
        jti: String, clientID: String, scopes: [String], lifetimeSeconds: Int, audience: String?,
        tokenDigest: [UInt8], dpopJKT: String?
    ) throws
    /// The user claims the account can release in an ID token.
    func userClaims(accountID: UUID) throws -> [String: JSONValue]
    /// The account's roles and groups, for an API's access-token claims.
    func attributes(accountID: UUID) throws -> AccountAttributes
    func record(_ event: AuditEvent) throws
    /// Records a DPoP proof's `jti` (RFC 9449 §11.1); false when it was used before.
    func recordDPoPProof(_ proof: DPoPProof, asynchronousCommit: Bool) throws -> Bool
}

extension TokenStore {
    /// Records a proof inside the grant's transaction: it commits with what the grant issues.
    func recordDPoPProof(_ proof: DPoPProof) throws -> Bool {
        try recordDPoPProof(proof, asynchronousCommit: false)
    }
}

/// A code the token request consumed: what the authorization endpoint stored, with its typed
/// ids and what changed since it was issued.
struct RedeemedCode: Sendable {
    var id: UUID
    /// What the protocol checks compare the token request with.
    var issued: IssuedAuthorizationCode
    var accountID: UUID
    var sessionID: UUID?
    /// The transaction's time.
    var now: Date
    /// An operator disabled the account after the code was issued.
    var accountDisabled: Bool
    /// The code's browser session ended since: what the code would issue would escape the
    /// tokens the session's end revoked.
    var sessionEnded: Bool
    /// Claims requested for the userinfo response (Core §5.5).
    var userinfoClaims: Set<String> = []
}

enum CodeRedemption: Sendable {
    case fresh(RedeemedCode)
    /// The code was already used: everything issued from it must be revoked.
    case replayed(codeID: UUID, accountID: UUID?)
    case unknown
}

enum RefreshRotation: Sendable {
    /// `now` is the transaction's time.
    case rotated(RefreshGrant, now: Date)
    /// A token that was already rotated came back: the caller revokes its family.
    case reused(familyID: UUID, clientID: String, accountID: UUID)
    case invalid(reason: String)
    /// The request's DPoP proof was used before: the caller rolls the rotation back.
    case proofReplayed
}

/// What one code or refresh grant issued, recorded in one statement.
struct IssuedTokens: Sendable {
    var grant: RefreshGrant
    /// `.newFamily` creates the family (a code's first refresh token); `.notIssued` records the
    /// access token alone.
    var refresh: RefreshTokenIssuance
    var refreshToken: String?
    var accessTokenID: String
    var accessExpiresAt: Date
    /// The code the tokens were issued from (revoked with them if the code comes back).
    var codeID: UUID?
    var absoluteSeconds: Int
    var idleSeconds: Int
    /// The access token's scopes (those of its audience, a subset of the grant's).
    var accessScopes: [String]
    /// The API the access token is for; nil for this server.
    var accessAudience: String? = nil
    /// The digest of an opaque access token (RFC 7662), looked up at introspection.
    var accessTokenDigest: [UInt8]? = nil
    /// The DPoP key the access token is bound to (RFC 9449 §6).
    var accessDPoPJKT: String? = nil
}

extension TokenFlow {
    /// The flow on the application's database.
    init(oauth: OAuthServices) {
        self.init(oauth: oauth, store: PostgresTokenStore(db: oauth.pool))
    }
}

/// `TokenStore` in PostgreSQL.
struct PostgresTokenStore: TokenStore {
    let db: any SQLExecutor

    func transaction<T, U>(_ body: (any TokenStore) throws -> T, whileCommitting: (T) throws -> U) throws -> U {
        try db.transaction({ connection in try body(PostgresTokenStore(db: connection)) }, whileCommitting: whileCommitting)
    }

    // MARK: - Authorization codes

    /// Consumes a code with one conditional UPDATE; a second attempt finds it consumed. The
    /// code's session row is share-locked until the caller's transaction ends, so a logout
    /// either waits for what the code issues (and its trigger revokes it) or is seen here.
    func consumeCode(_ code: String) throws -> CodeRedemption {
        let codeDigest = TimeOrderedToken.key(code)
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
            RETURNING id, client_id, redirect_uri, code_challenge, nonce, scopes, id_token_claims, userinfo_claims,
                      account_id, resources, dpop_jkt,
                      session_id, auth_time, amr, expires_at, now() AS now,
                      (SELECT a.disabled_at IS NOT NULL FROM accounts a
                       WHERE a.id = authorization_codes.account_id) AS account_disabled,
                      (SELECT revoked_at IS NOT NULL FROM session) AS session_ended
            """)
        if let row = rows.first {
            let accountID: UUID = try row.decode("account_id")
            let sessionID: UUID? = try row.decode("session_id")
            let claims: [String] = try row.decode("id_token_claims")
            var issued = IssuedAuthorizationCode(
                clientID: try row.decode("client_id"), redirectURI: try row.decode("redirect_uri"),
                codeChallenge: try row.decode("code_challenge"), scopes: try row.decode("scopes"),
                nonce: try row.decode("nonce"), accountID: accountID.lowercased,
                authTime: try row.decode("auth_time"), amr: try row.decode("amr"),
                sessionID: sessionID?.lowercased, idTokenClaims: Set(claims),
                expiresAt: try row.decode("expires_at"))
            issued.resources = try row.decode("resources")
            issued.dpopJKT = try row.decode("dpop_jkt")
            return .fresh(
                RedeemedCode(
                    id: try row.decode("id"),
                    issued: issued,
                    accountID: accountID, sessionID: sessionID, now: try row.decode("now"),
                    accountDisabled: try row.decode("account_disabled", as: Bool?.self) ?? true,
                    sessionEnded: try row.decode("session_ended", as: Bool?.self) ?? false,
                    userinfoClaims: Set(try row.decode("userinfo_claims", as: [String].self))))
        }
        if let row = try db.query(
            "SELECT id, account_id FROM authorization_codes WHERE code_digest = \(codeDigest)"
        ).first {
            return .replayed(codeID: try row.decode("id"), accountID: try row.decode("account_id"))
        }
        return .unknown
    }

    /// Revokes the families and access tokens a replayed code issued. Anyone may replay a code
    /// it once held, as often as it likes, so both statements find their rows through indexes:
    /// the families' ids are one array (`= ANY`), which the access-token records' index on
    /// `family_id` serves, where `family_id IN (subquery)` beside an OR read every record.
    func revokeIssuedFromCode(_ codeID: UUID) throws {
        try db.query(
            """
            UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = 'code_replay'
            WHERE authorization_code_id = \(codeID) AND revoked_at IS NULL
            """)
        try db.query(
            """
            UPDATE access_tokens SET revoked_at = now()
            WHERE revoked_at IS NULL AND (authorization_code_id = \(codeID)
               OR family_id = ANY (ARRAY(SELECT id FROM refresh_token_families WHERE authorization_code_id = \(codeID))))
            """)
    }

    // MARK: - Refresh tokens

    /// Marks a refresh token used (in the caller's transaction). A live family's live token
    /// rotates; a rotated token is reported, for the caller to revoke its family. Disabling an
    /// account revokes its families, so a disabled account's token is never live. The DPoP
    /// proof's record goes in the same statement, which saves a round trip per refresh; a
    /// replayed proof is reported first, whatever the token. The family stays share-locked
    /// until the caller's transaction ends, so that no revocation misses what it issues.
    func rotateRefreshToken(_ token: String, proof: DPoPProof?, rotate: Bool, idleSeconds: Int) throws
        -> RefreshRotation
    {
        let tokenDigest = TimeOrderedToken.key(token)
        let proofDigest = proof.map(OAuthStore.dpopProofDigest)
        let rows = try db.query(
            """
            WITH proof AS (
                INSERT INTO dpop_proofs (proof_digest, expires_at)
                SELECT \(proofDigest)::bytea, now() + make_interval(secs => \(OAuthStore.dpopProofKeepSeconds)::float8)
                WHERE \(proofDigest)::bytea IS NOT NULL
                ON CONFLICT DO NOTHING
                RETURNING 1
            ), family AS (
                -- Share-locked until the grant commits. A revocation marks the families, then
                -- their access tokens: one under way is waited for and seen here; one that starts
                -- later waits for this grant, so that its access-token UPDATE sees what it issued.
                SELECT f.* FROM refresh_token_families f
                WHERE f.id = (SELECT family_id FROM refresh_tokens WHERE token_digest = \(tokenDigest) AND rotated_at IS NULL)
                FOR SHARE
            ), rotated AS (
                UPDATE refresh_tokens t
                SET rotated_at = CASE WHEN \(rotate) THEN now() END,
                    -- A kept token's idle expiry moves with its use, never past the family's
                    -- end, and never for a token already expired.
                    expires_at = CASE WHEN \(rotate) OR t.expires_at <= now() THEN t.expires_at
                                      ELSE LEAST(now() + make_interval(secs => \(idleSeconds)::float8), f.absolute_expires_at) END
                FROM family f
                WHERE t.token_digest = \(tokenDigest) AND t.rotated_at IS NULL AND f.id = t.family_id
                RETURNING \(RefreshGrant.columns),
                          (f.revoked_at IS NULL AND f.absolute_expires_at > now() AND t.expires_at > now()
                           AND \(raw: RefreshGrant.sessionHeld)) AS live,
                          now() AS now
            ), touched AS (
                -- Such a refresh is the session's use: its idle deadline moves, at most once a
                -- minute (as a request of the browser moves it). A session locked elsewhere is
                -- left alone: its sign-out may be waiting for the family lock above.
                UPDATE authentication_sessions SET last_seen_at = now()
                WHERE id = (SELECT s.id FROM authentication_sessions s JOIN rotated r ON s.id = r.session_id
                            WHERE r.live AND NOT ('offline_access' = ANY (r.scopes))
                              AND s.last_seen_at < now() - interval '1 minute'
                            FOR UPDATE OF s SKIP LOCKED)
            )
            SELECT (SELECT count(*) FROM proof) AS fresh_proofs, rotated.*
            FROM (SELECT 1) AS one LEFT JOIN rotated ON true
            """)
        if proof != nil, try rows.first?.decode("fresh_proofs", as: Int.self) != 1 { return .proofReplayed }
        if let row = rows.first, try row.decode("id", as: UUID?.self) != nil {
            let grant = try RefreshGrant(row: row)
            guard try row.decode("live", as: Bool.self) else { return .invalid(reason: "expired or revoked") }
            return .rotated(grant, now: try row.decode("now"))
        }
        let used = try db.query(
            """
            SELECT f.id, f.client_id, f.account_id
            FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id
            WHERE t.token_digest = \(tokenDigest)
            """)
        guard let row = used.first else { return .invalid(reason: "unknown") }
        return .reused(
            familyID: try row.decode("id"), clientID: try row.decode("client_id"),
            accountID: try row.decode("account_id"))
    }

    func revokeFamily(_ familyID: UUID, reason: String) throws {
        try OAuthStore.revokeFamily(familyID, reason: reason, on: db)
    }

    // MARK: - Issuing

    /// Records what a code or refresh grant issues, in one statement: the refresh-token family
    /// (`.newFamily`, for a code's first refresh token), the refresh token (its idle deadline
    /// never passes the family's absolute one), and the access token's record. Both carry the
    /// browser session, so that ending it revokes them (migration 0011's trigger) unless the
    /// family was granted `offline_access`.
    func recordIssued(_ issued: IssuedTokens) throws {
        let grant = issued.grant
        let createFamily = issued.refresh == .newFamily
        let refreshDigest = issued.refreshToken.map(TimeOrderedToken.key)
        // Sent with the grant's next statement or its COMMIT (one round trip less).
        try db.queue(
            """
            WITH family AS (
                INSERT INTO refresh_token_families
                    (id, client_id, account_id, session_id, authorization_code_id, scopes, auth_time, amr, absolute_expires_at,
                     id_token_claims, userinfo_claims, resources, dpop_jkt)
                SELECT \(grant.familyID), \(grant.clientID), \(grant.accountID), \(grant.sessionID), \(issued.codeID),
                       \(grant.scopes), \(grant.authTime), \(grant.amr), now() + make_interval(secs => \(issued.absoluteSeconds)::float8),
                       \(grant.idTokenClaims.sorted()), \(grant.userinfoClaims.sorted()), \(grant.resources), \(grant.dpopJKT)
                WHERE \(createFamily)
                RETURNING id, absolute_expires_at
            ), refresh AS (
                INSERT INTO refresh_tokens (token_digest, family_id, expires_at)
                SELECT \(refreshDigest), f.id, LEAST(now() + make_interval(secs => \(issued.idleSeconds)::float8), f.absolute_expires_at)
                FROM (SELECT id, absolute_expires_at FROM family
                      UNION ALL
                      SELECT id, absolute_expires_at FROM refresh_token_families
                      WHERE id = \(grant.familyID) AND NOT \(createFamily)) AS f
                WHERE \(refreshDigest)::bytea IS NOT NULL
            )
            INSERT INTO access_tokens
                (jti, client_id, account_id, family_id, authorization_code_id, session_id, scopes, expires_at, audience, token_digest,
                 userinfo_claims, dpop_jkt)
            VALUES (\(issued.accessTokenID), \(grant.clientID), \(grant.accountID), \(issued.refresh.belongsToFamily ? grant.familyID : nil), \(issued.codeID),
                    \(grant.sessionID), \(issued.accessScopes), \(issued.accessExpiresAt), \(issued.accessAudience), \(issued.accessTokenDigest),
                    \(grant.userinfoClaims.sorted()), \(issued.accessDPoPJKT))
            """)
    }

    /// Records an opaque client_credentials access token, committing without waiting for the
    /// disk (a lost record fails safe: the token is unknown, so refused).
    func recordClientAccessToken(
        jti: String, clientID: String, scopes: [String], lifetimeSeconds: Int, audience: String?,
        tokenDigest: [UInt8], dpopJKT: String?
    ) throws {
        try db.query(
            """
            INSERT INTO access_tokens (jti, client_id, scopes, expires_at, audience, token_digest, dpop_jkt)
            SELECT \(jti), \(clientID), \(scopes), now() + make_interval(secs => \(lifetimeSeconds)::float8),
                   \(audience), \(tokenDigest), \(dpopJKT)
            FROM \(.asynchronousCommit)
            """)
    }

    func userClaims(accountID: UUID) throws -> [String: JSONValue] {
        try OAuthStore.userClaims(accountID: accountID, on: db)
    }

    func attributes(accountID: UUID) throws -> AccountAttributes {
        try AccountStore.attributes(accountID: accountID, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }

    func recordDPoPProof(_ proof: DPoPProof, asynchronousCommit: Bool) throws -> Bool {
        try OAuthStore.recordDPoPProof(proof, asynchronousCommit: asynchronousCommit, on: db)
    }
}
