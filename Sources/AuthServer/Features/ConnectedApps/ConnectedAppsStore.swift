import Foundation
import OIDC
import Postgres

/// What `ConnectedAppsFlow` reads and changes: the account's consents.
protocol ConnectedAppsStore {
    /// The clients the account approved, most recent first.
    func consents(accountID: UUID) throws -> [OAuthStore.ConsentSummary]
    /// Withdraws consent, uses up the client's codes not yet redeemed and revokes its refresh
    /// and access tokens for the account; false when there was no consent to withdraw.
    func revokeConsent(accountID: UUID, clientID: String) throws -> Bool
    /// Runs `body` in one transaction; the store it passes uses only that transaction.
    func transaction<T>(_ body: (any ConnectedAppsStore) throws -> T) throws -> T
}

struct PostgresConnectedAppsStore<DB: SQLExecutor>: ConnectedAppsStore {
    let db: DB

    func consents(accountID: UUID) throws -> [OAuthStore.ConsentSummary] {
        try OAuthStore.consents(accountID: accountID, on: db)
    }

    func revokeConsent(accountID: UUID, clientID: String) throws -> Bool {
        let removed = try db.query(
            "DELETE FROM consents WHERE account_id = \(accountID) AND client_id = \(clientID)"
        ).affectedRows
        // The codes first: an exchange under way holds its code's row, so this waits for it and
        // the revocations below see what it issued; an exchange that comes later finds its code
        // used up and is refused.
        try db.query(
            """
            UPDATE authorization_codes SET consumed_at = now()
            WHERE account_id = \(accountID) AND client_id = \(clientID) AND consumed_at IS NULL
            """)
        try db.query(
            """
            UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = 'consent_revoked'
            WHERE account_id = \(accountID) AND client_id = \(clientID) AND revoked_at IS NULL
            """)
        try db.query(
            """
            UPDATE access_tokens SET revoked_at = now()
            WHERE account_id = \(accountID) AND client_id = \(clientID) AND revoked_at IS NULL
            """)
        return removed > 0
    }

    func transaction<T>(_ body: (any ConnectedAppsStore) throws -> T) throws -> T {
        try db.transaction { connection in
            try body(PostgresConnectedAppsStore<PostgresConnection>(db: connection))
        }
    }
}

/// The store on the pool may be shared; one on a transaction's connection stays in its closure.
extension PostgresConnectedAppsStore: Sendable where DB: Sendable {}

extension OAuthStore {
    struct ConsentSummary: Sendable, Equatable {
        var clientID: String
        var scopes: [String]
        var grantedAt: Date
    }

    /// The account's consents, most recent first (also listed by the account administration).
    static func consents(accountID: UUID, on db: some SQLExecutor) throws -> [ConsentSummary] {
        try db.query(
            "SELECT client_id, scopes, granted_at FROM consents WHERE account_id = \(accountID) ORDER BY granted_at DESC"
        ).map {
            ConsentSummary(
                clientID: try $0.decode("client_id"), scopes: try $0.decode("scopes"),
                grantedAt: try $0.decode("granted_at"))
        }
    }
}
