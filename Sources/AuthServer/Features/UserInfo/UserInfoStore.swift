import Foundation
import OIDC

/// What `/userinfo` reads: whether an access token is still live, and the account's claims.
protocol UserInfoStore {
    /// The userinfo claims requested when the token was issued (Core §5.5); nil when the
    /// token is not live (unknown, revoked, expired).
    func liveAccessTokenUserinfoClaims(jti: String) throws -> Set<String>?
    /// The claims the account can release; empty when the account no longer exists.
    func userClaims(accountID: UUID) throws -> [String: JSONValue]
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

    func userClaims(accountID: UUID) throws -> [String: JSONValue] {
        try OAuthStore.userClaims(accountID: accountID, on: db)
    }
}
