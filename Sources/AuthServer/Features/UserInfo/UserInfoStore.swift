import Foundation
import OIDC

/// What `/userinfo` reads: whether an access token is still live, and the account's claims.
protocol UserInfoStore {
    /// The userinfo claims requested when the token was issued (Core §5.5); nil when the
    /// token is not live (unknown, revoked, expired).
    func liveAccessTokenUserinfoClaims(jti: String) throws -> Set<String>?
    /// Whether a verified access token is neither revoked nor expired (`OAuthStore`).
    func accessTokenIsLive(_ claims: AccessTokenClaims) throws -> Bool
    /// The claims the account can release; empty when the account no longer exists.
    func userClaims(accountID: UUID) throws -> [String: JSONValue]
    /// Records a DPoP proof's `jti` (RFC 9449 §11.1); false when it was used before.
    func recordDPoPProof(_ proof: DPoPProof) throws -> Bool
}

extension UserInfoFlow {
    /// The flow on the application's database.
    init(oauth: OAuthServices) {
        self.init(oauth: oauth, store: PostgresUserInfoStore(db: oauth.pool))
    }
}

/// `UserInfoStore` in PostgreSQL: the shared OAuth statements, one at a time.
struct PostgresUserInfoStore: UserInfoStore {
    let db: any SQLExecutor

    func liveAccessTokenUserinfoClaims(jti: String) throws -> Set<String>? {
        try OAuthStore.liveAccessTokenUserinfoClaims(jti: jti, on: db)
    }

    func accessTokenIsLive(_ claims: AccessTokenClaims) throws -> Bool {
        try OAuthStore.accessTokenIsLive(claims, on: db)
    }

    func userClaims(accountID: UUID) throws -> [String: JSONValue] {
        try OAuthStore.userClaims(accountID: accountID, on: db)
    }

    /// A statement of its own, committed without waiting for the disk: userinfo writes
    /// nothing else.
    func recordDPoPProof(_ proof: DPoPProof) throws -> Bool {
        try OAuthStore.recordDPoPProof(proof, asynchronousCommit: true, on: db)
    }
}
