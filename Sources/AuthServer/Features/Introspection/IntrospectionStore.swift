import Foundation
import OIDC

/// What introspection reads: whether an access token is live, an opaque access token's
/// record, a refresh token's family, and an account's roles and groups.
protocol IntrospectionStore {
    /// Whether a verified access token is neither revoked nor expired (`OAuthStore`).
    func accessTokenIsLive(_ claims: AccessTokenClaims) throws -> Bool
    func liveOpaqueAccessToken(_ token: String) throws -> OpaqueAccessToken?
    func refreshTokenInfo(_ token: String) throws -> RefreshTokenInfo?
    func attributes(accountID: UUID) throws -> AccountAttributes
    /// Records a DPoP proof's `jti` (RFC 9449 §11.1); false when it was used before.
    func recordDPoPProof(_ proof: DPoPProof) throws -> Bool
}

extension IntrospectionFlow {
    /// The flow on the application's database.
    init(oauth: OAuthServices) {
        self.init(oauth: oauth, store: PostgresIntrospectionStore(db: oauth.pool))
    }
}

/// `IntrospectionStore` in PostgreSQL: the shared OAuth statements, one at a time.
struct PostgresIntrospectionStore: IntrospectionStore {
    let db: any SQLExecutor

    func accessTokenIsLive(_ claims: AccessTokenClaims) throws -> Bool {
        try OAuthStore.accessTokenIsLive(claims, on: db)
    }

    func liveOpaqueAccessToken(_ token: String) throws -> OpaqueAccessToken? {
        try OAuthStore.liveOpaqueAccessToken(token, on: db)
    }

    func refreshTokenInfo(_ token: String) throws -> RefreshTokenInfo? {
        try OAuthStore.refreshTokenInfo(token, on: db)
    }

    func attributes(accountID: UUID) throws -> AccountAttributes {
        try AccountStore.attributes(accountID: accountID, on: db)
    }

    func recordDPoPProof(_ proof: DPoPProof) throws -> Bool {
        try OAuthStore.recordDPoPProof(proof, asynchronousCommit: true, on: db)
    }
}
