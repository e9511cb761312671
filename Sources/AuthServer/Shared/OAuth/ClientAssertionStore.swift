import Foundation
import Postgres

/// The `private_key_jwt` assertion ids already used, kept until the assertions expire.
protocol ClientAssertionStore {
    /// Records an assertion id; false when it was used before.
    func recordAssertion(clientID: String, jti: String, expiresAt: Date) throws -> Bool
}

extension ClientAuthenticator {
    /// The authenticator on the application's database.
    init(oauth: OAuthServices) {
        self.init(oauth: oauth, assertions: PostgresClientAssertionStore(db: oauth.pool))
    }
}

/// `ClientAssertionStore` in PostgreSQL (`client_assertion_ids`).
struct PostgresClientAssertionStore: ClientAssertionStore {
    let db: any SQLExecutor

    func recordAssertion(clientID: String, jti: String, expiresAt: Date) throws -> Bool {
        try db.query("DELETE FROM client_assertion_ids WHERE expires_at < now() - interval '5 minutes'")
        return try db.query(
            """
            INSERT INTO client_assertion_ids (client_id, jti, expires_at) VALUES (\(clientID), \(jti), \(expiresAt))
            ON CONFLICT DO NOTHING
            """
        ).affectedRows == 1
    }
}
