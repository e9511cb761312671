import Foundation
import OIDC
import Postgres

extension OAuthStore {
    struct ConsentSummary: Sendable, Equatable {
        var clientID: String
        var scopes: [String]
        var grantedAt: Date
    }

    static func consents(accountID: UUID, on db: some SQLExecutor) throws -> [ConsentSummary] {
        try db.query(
            "SELECT client_id, scopes, granted_at FROM consents WHERE account_id = \(accountID) ORDER BY granted_at DESC"
        ).map {
            ConsentSummary(
                clientID: try $0.decode("client_id"), scopes: try $0.decode("scopes"),
                grantedAt: try $0.decode("granted_at"))
        }
    }

    /// Withdraws consent and revokes the client's refresh tokens and access tokens for the account.
    static func revokeConsent(accountID: UUID, clientID: String, on db: some SQLExecutor) throws -> Bool {
        let removed = try db.query(
            "DELETE FROM consents WHERE account_id = \(accountID) AND client_id = \(clientID)"
        ).affectedRows
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
}
