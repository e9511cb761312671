import Foundation

/// `/account/apps`: the clients the account approved (consents), each revocable. Revoking
/// also revokes that client's refresh and access tokens for the account.
struct ConnectedAppsFlow: Sendable {
    let oauth: OAuthServices
    let store: any ConnectedAppsStore & Sendable

    struct ConnectedApp: Sendable, Equatable {
        var clientID: String
        var name: String
        var scopes: [String]
        var grantedAt: Date
    }

    /// The account's approved clients, most recently approved first.
    func list(accountID: UUID) throws -> [ConnectedApp] {
        try store.consents(accountID: accountID).map {
            ConnectedApp(
                clientID: $0.clientID, name: oauth.clientName($0.clientID), scopes: $0.scopes,
                grantedAt: $0.grantedAt)
        }
    }

    /// Withdraws the account's consent for `clientID` with the tokens it issued, in one
    /// transaction; false when there was none.
    @discardableResult
    func revoke(accountID: UUID, clientID: String) throws -> Bool {
        let removed = try store.transaction { store in
            try store.revokeConsent(accountID: accountID, clientID: clientID)
        }
        if removed {
            oauth.log.info("consent.revoked", ["client_id": clientID, "account": accountID.uuidString])
        }
        return removed
    }
}
