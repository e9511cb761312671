import Foundation
import Postgres

/// The `private_key_jwt` assertion ids already used, kept while a check could accept them.
protocol ClientAssertionStore {
    /// Records an assertion id until `acceptableUntil` (its `exp` with the check's leeway);
    /// false when it was used before and could still be accepted.
    func recordAssertion(clientID: String, jti: String, acceptableUntil: Date) throws -> Bool
}

extension ClientAuthenticator {
    /// The authenticator on the application's database.
    init(oauth: OAuthServices) {
        self.init(oauth: oauth, assertions: PostgresClientAssertionStore(db: oauth.pool))
    }
}

/// `ClientAssertionStore` in PostgreSQL (`client_assertion_ids`; the maintenance pass
/// removes the records past `OAuthStore.replayMargin`).
struct PostgresClientAssertionStore: ClientAssertionStore {
    let db: any SQLExecutor

    func recordAssertion(clientID: String, jti: String, acceptableUntil: Date) throws -> Bool {
        try OAuthStore.recordOnce(
            .clientAssertions, clientID: clientID, jti: jti, acceptableUntil: acceptableUntil, on: db)
    }
}
