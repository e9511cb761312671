import Foundation

/// What introspection reads: whether an access token is live, and a refresh token's family.
protocol IntrospectionStore {
    func accessTokenIsLive(jti: String) throws -> Bool
    func refreshTokenInfo(_ token: String) throws -> RefreshTokenInfo?
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

    func accessTokenIsLive(jti: String) throws -> Bool {
        try OAuthStore.accessTokenIsLive(jti: jti, on: db)
    }

    func refreshTokenInfo(_ token: String) throws -> RefreshTokenInfo? {
        try OAuthStore.refreshTokenInfo(token, on: db)
    }
}
