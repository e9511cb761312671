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

    /// One statement: an id whose record is past `OAuthStore.replayMargin` (not yet purged)
    /// is recorded anew; any other conflict is a replay.
    func recordAssertion(clientID: String, jti: String, acceptableUntil: Date) throws -> Bool {
        try db.query(
            """
            INSERT INTO client_assertion_ids (client_id, jti, expires_at)
            VALUES (\(clientID), \(jti), \(acceptableUntil))
            ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE client_assertion_ids.expires_at < now() - \(OAuthStore.replayMargin)
            RETURNING jti
            """
        ).first != nil
    }
}
