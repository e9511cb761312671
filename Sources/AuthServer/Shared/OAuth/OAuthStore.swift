import Crypto
import Foundation
import OIDC
import Postgres

/// SQL for the OAuth state that several features share: refresh-token families and access
/// tokens (read by the token endpoint, introspection, revocation and userinfo; revoked by
/// sign-out everywhere and account administration). Codes and refresh tokens are stored as
/// digests (`TimeOrderedToken.key`); each one-time value is consumed by a single conditional
/// UPDATE, so racing instances cannot both succeed. Each feature's own statements live in its
/// store (`PostgresTokenStore`, `PostgresRevocationStore` …).
enum OAuthStore {
    static func digest(_ secret: String) -> [UInt8] { SHA256.hash(data: Array(secret.utf8)).bytes }

    // MARK: - Replay records

    /// How long the records that refuse a replay (client assertions, request objects, DPoP
    /// proofs) are kept past the last moment any check could accept what they name: the
    /// instances' clocks differ from PostgreSQL's, which reads the records' expiry.
    static let replayMarginSQL: StaticString = "interval '5 minutes'"
    static let replayMargin = PostgresQuery.Fragment(replayMarginSQL)

    /// The tables of one-time ids per client: `(client_id, jti)` until `expires_at`.
    enum ReplayIDs {
        case clientAssertions, requestObjects

        var table: PostgresQuery.Fragment {
            switch self {
            case .clientAssertions: PostgresQuery.Fragment("client_assertion_ids")
            case .requestObjects: PostgresQuery.Fragment("request_object_ids")
            }
        }
    }

    /// Records a client's one-time `jti` until `acceptableUntil` (the last moment its check
    /// accepts it); false when it was recorded before and could still be accepted. One
    /// statement: a record past `replayMargin` (not yet purged) is recorded anew.
    static func recordOnce(
        _ ids: ReplayIDs, clientID: String, jti: String, acceptableUntil: Date, on db: some SQLExecutor
    ) throws -> Bool {
        try db.query(
            """
            INSERT INTO \(ids.table) AS r (client_id, jti, expires_at)
            VALUES (\(clientID), \(jti), \(acceptableUntil))
            ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE r.expires_at < now() - \(replayMargin)
            RETURNING jti
            """
        ).first != nil
    }

    // MARK: - DPoP proofs

    /// What the replay cache keeps of a proof: SHA-256 of its key's thumbprint and its `jti`.
    static func dpopProofDigest(_ proof: DPoPProof) -> [UInt8] {
        SHA256.hash(data: Array((proof.thumbprint + " " + proof.jwtID).utf8)).bytes
    }

    /// How long a proof's record is kept: until the proof is too old to be accepted anyway.
    static let dpopProofKeepSeconds = Int(DPoPProofVerifier.maximumAge + DPoPProofVerifier.maximumSkew) + 1

    /// Records a DPoP proof's `jti` for its key (RFC 9449 §11.1); false when a proof with the
    /// same key and `jti` was recorded before, on any instance. Kept until the proof is too
    /// old to be accepted anyway. `asynchronousCommit` for a statement of its own whose loss
    /// in a crash only reopens a replay window of a minute for proofs already seen.
    static func recordDPoPProof(_ proof: DPoPProof, asynchronousCommit: Bool = false, on db: some SQLExecutor)
        throws -> Bool
    {
        let digest = dpopProofDigest(proof)
        let keep = dpopProofKeepSeconds
        if asynchronousCommit {
            return try db.query(
                """
                INSERT INTO dpop_proofs (proof_digest, expires_at)
                SELECT \(digest), now() + make_interval(secs => \(keep)::float8) FROM \(.asynchronousCommit)
                ON CONFLICT DO NOTHING
                """
            ).affectedRows == 1
        }
        return try db.query(
            """
            INSERT INTO dpop_proofs (proof_digest, expires_at)
            VALUES (\(digest), now() + make_interval(secs => \(keep)::float8))
            ON CONFLICT DO NOTHING
            """
        ).affectedRows == 1
    }

    // MARK: - Refresh tokens

    /// The live family of a refresh token (for revocation and introspection), without using it:
    /// live as the rotation would find it.
    static func refreshTokenInfo(_ token: String, on db: some SQLExecutor) throws -> RefreshTokenInfo? {
        let rows = try db.query(
            """
            SELECT \(RefreshGrant.columns), t.expires_at, t.created_at,
                   (t.rotated_at IS NULL AND f.revoked_at IS NULL AND f.absolute_expires_at > now() AND t.expires_at > now()
                    AND \(raw: RefreshGrant.sessionHeld)) AS live
            FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id
            WHERE t.token_digest = \(TimeOrderedToken.key(token))
            """)
        guard let row = rows.first else { return nil }
        return RefreshTokenInfo(
            grant: try RefreshGrant(row: row), expiresAt: try row.decode("expires_at"),
            issuedAt: try row.decode("created_at"), live: try row.decode("live"))
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

    // MARK: - Access tokens

    /// The claims requested for the userinfo response when the access token `jti` was issued
    /// (Core §5.5), or nil when the token is unknown, revoked or expired.
    static func liveAccessTokenUserinfoClaims(jti: String, on db: some SQLExecutor) throws -> Set<String>? {
        let row = try db.query(
            """
            SELECT userinfo_claims FROM access_tokens
            WHERE jti = \(jti) AND revoked_at IS NULL AND expires_at > now()
            """
        ).first
        return try row.map { Set(try $0.decode("userinfo_claims", as: [String].self)) }
    }

    /// Whether an access token this server signed is neither revoked nor expired. A user's
    /// token lives by its record (written when it is issued, revoked with its session, family
    /// or account). A client's own token (client_credentials, its signed `gty`) has a record
    /// only once its client revoked it. Either way PostgreSQL's clock must find it unexpired
    /// too: the purge removes a revocation record by that clock an hour after the token's
    /// `exp`, which a server clock running behind must not read as a live token again.
    static func accessTokenIsLive(_ claims: AccessTokenClaims, on db: some SQLExecutor) throws -> Bool {
        if claims.isClientCredentials {
            return try db.query(
                """
                SELECT \(claims.expiresAt)::timestamptz > now() AND NOT EXISTS (
                    SELECT 1 FROM access_tokens WHERE jti = \(claims.jwtID) AND revoked_at IS NOT NULL) AS live
                """
            ).first?.decode("live", as: Bool.self) == true
        }
        return try db.query(
            """
            SELECT 1 AS one FROM access_tokens
            WHERE jti = \(claims.jwtID) AND revoked_at IS NULL AND expires_at > now()
            """
        ).first != nil
    }

    /// Revokes a client's own JWT (client_credentials), which has no record until now: the
    /// record written here refuses it until it expires, when the purge removes it.
    static func revokeClientAccessToken(
        _ claims: AccessTokenClaims, audience: String?, on db: some SQLExecutor
    ) throws {
        try db.query(
            """
            INSERT INTO access_tokens (jti, client_id, scopes, issued_at, expires_at, audience, dpop_jkt, revoked_at)
            VALUES (\(claims.jwtID), \(claims.clientID), \(claims.scope), \(claims.issuedAt), \(claims.expiresAt),
                    \(audience), \(claims.confirmationJKT), now())
            ON CONFLICT (jti) DO UPDATE SET revoked_at = COALESCE(access_tokens.revoked_at, now())
            WHERE access_tokens.client_id = excluded.client_id
            """)
    }

    /// An opaque access token (RFC 7662) by its digest, if it is live.
    static func liveOpaqueAccessToken(_ token: String, on db: some SQLExecutor) throws -> OpaqueAccessToken? {
        try db.query(
            """
            SELECT jti, client_id, account_id, scopes, audience, issued_at, expires_at, dpop_jkt FROM access_tokens
            WHERE token_digest = \(digest(token)) AND revoked_at IS NULL AND expires_at > now()
            """
        ).first.map { row in
            OpaqueAccessToken(
                jti: try row.decode("jti"), clientID: try row.decode("client_id"),
                accountID: try row.decode("account_id"), scopes: try row.decode("scopes"),
                audience: try row.decode("audience"), issuedAt: try row.decode("issued_at"),
                expiresAt: try row.decode("expires_at"), dpopJKT: try row.decode("dpop_jkt"))
        }
    }

    /// Revokes an opaque access token of `clientID` (RFC 7009); true when one was found.
    @discardableResult
    static func revokeOpaqueAccessToken(_ token: String, clientID: String, on db: some SQLExecutor) throws
        -> Bool
    {
        try !db.query(
            """
            UPDATE access_tokens SET revoked_at = COALESCE(revoked_at, now())
            WHERE token_digest = \(digest(token)) AND client_id = \(clientID) RETURNING jti
            """
        ).isEmpty
    }

    // MARK: - User claims

    /// The user claims an account can release (profile and email scopes), for ID tokens and
    /// userinfo. A profile field the account does not hold is omitted, never null (OpenID
    /// Connect Core §5.3.2). `updated_at` is when a released claim last changed (Core §5.1:
    /// "Time the End-User's information was last updated"), not when the account was created.
    /// An account whose address another account verified first has none: no `email` claim at
    /// all. An unknown account has no claims.
    static func userClaims(accountID: UUID, on db: some SQLExecutor) throws -> [String: JSONValue] {
        guard let account = try AccountStore.summary(accountID: accountID, on: db) else { return [:] }
        var claims: [String: JSONValue] = [
            "name": .string(account.displayName),
            "updated_at": .int(Int(account.profileUpdatedAt.timeIntervalSince1970)),
        ]
        for field in ProfileFields.Field.allCases {
            if let value = account.profile[field] { claims[field.rawValue] = .string(value) }
        }
        if !account.email.isEmpty {
            claims["email"] = .string(account.email)
            claims["email_verified"] = .bool(account.emailVerified)
        }
        return claims
    }
}

/// What a refresh-token family grants: the client, the account and its browser session, the
/// scopes, the original authentication (`auth_time`, `amr`), and the claims requested
/// through `claims` (Core §5.5), which every token issued from the family repeats.
struct RefreshGrant: Sendable {
    var familyID: UUID
    var clientID: String
    var accountID: UUID
    var sessionID: UUID?
    var scopes: [String]
    var authTime: Date
    var amr: [String]
    /// Claims requested for the ID token and for the userinfo response.
    var idTokenClaims: Set<String> = []
    var userinfoClaims: Set<String> = []
    /// The APIs the grant covers (RFC 8707 resource indicators).
    var resources: [String] = []
    /// The DPoP key (`jkt`) a public client's refresh tokens are bound to (RFC 9449 §5).
    var dpopJKT: String? = nil

    /// The columns a grant is read from, `f` being `refresh_token_families`.
    static let columns = PostgresQuery.Fragment(
        "f.id, f.client_id, f.account_id, f.session_id, f.scopes, f.auth_time, f.amr, f.id_token_claims, f.userinfo_claims, f.resources, f.dpop_jkt"
    )

    /// Whether the family `f` still has what it depends on beyond its own dates: without
    /// `offline_access` a family ends with its browser session, however that ends (signed out,
    /// revoked, idle or past its lifetime). The rotation and introspection both apply it.
    static let sessionHeld = """
        ('offline_access' = ANY (f.scopes) OR f.session_id IS NULL
         OR EXISTS (SELECT 1 FROM authentication_sessions s WHERE s.id = f.session_id AND \(SessionStore.live)))
        """

    /// Reads a row selected with `columns`.
    init(row: PostgresRow) throws {
        self.init(
            familyID: try row.decode("id"), clientID: try row.decode("client_id"),
            accountID: try row.decode("account_id"), sessionID: try row.decode("session_id"),
            scopes: try row.decode("scopes"), authTime: try row.decode("auth_time"),
            amr: try row.decode("amr"),
            idTokenClaims: Set(try row.decode("id_token_claims", as: [String].self)),
            userinfoClaims: Set(try row.decode("userinfo_claims", as: [String].self)))
        resources = try row.decode("resources")
        dpopJKT = try row.decode("dpop_jkt")
    }

    init(
        familyID: UUID, clientID: String, accountID: UUID, sessionID: UUID?, scopes: [String], authTime: Date,
        amr: [String], idTokenClaims: Set<String> = [], userinfoClaims: Set<String> = []
    ) {
        self.familyID = familyID
        self.clientID = clientID
        self.accountID = accountID
        self.sessionID = sessionID
        self.scopes = scopes
        self.authTime = authTime
        self.amr = amr
        self.idTokenClaims = idTokenClaims
        self.userinfoClaims = userinfoClaims
    }
}

/// A refresh token as revocation and introspection see it: its family's grant, its own
/// lifetime, and whether it can still be used (not rotated, family live, not expired).
struct RefreshTokenInfo: Sendable {
    var grant: RefreshGrant
    var expiresAt: Date
    var issuedAt: Date
    var live: Bool
}

/// The record of an opaque access token: what introspection tells its API.
struct OpaqueAccessToken: Sendable {
    var jti: String
    var clientID: String
    /// nil for a client_credentials token (its subject is the client).
    var accountID: UUID?
    var scopes: [String]
    var audience: String?
    var issuedAt: Date
    var expiresAt: Date
    /// The DPoP key the token is bound to (RFC 9449 §6.2), if any.
    var dpopJKT: String? = nil
}
