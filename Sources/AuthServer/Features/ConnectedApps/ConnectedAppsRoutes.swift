import Foundation
import HTTPServer
import LoginPages

/// `/account/apps`: the clients the account approved (consents), each revocable. Revoking
/// also revokes that client's refresh and access tokens for the account.
struct ConnectedAppsRoutes: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let oauth = oauth
        router.get("/account/apps") { request, _ in
            guard let session = try oauth.accounts.sessions.current(request) else {
                return OAuthServices.noStore(.redirect(to: "/signin?return_to=%2Faccount%2Fapps"))
            }
            return try Self.page(oauth, request, accountID: session.accountID, notice: nil)
        }
        router.post("/account/apps/revoke") { request, _ in
            guard let session = try oauth.accounts.sessions.current(request) else {
                return OAuthServices.noStore(.redirect(to: "/signin?return_to=%2Faccount%2Fapps"))
            }
            let form = PageRoutes.form(request)
            do {
                try oauth.accounts.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")
            } catch {
                return try Self.page(
                    oauth, request, accountID: session.accountID, notice: nil, status: .forbidden)
            }
            let clientID = form["client_id"] ?? ""
            let removed = try oauth.pool.withTransaction { connection in
                try OAuthStore.revokeConsent(accountID: session.accountID, clientID: clientID, on: connection)
            }
            if removed {
                oauth.log.info(
                    "consent.revoked", ["client_id": clientID, "account": session.accountID.uuidString])
            }
            return OAuthServices.noStore(.redirect(to: "/account/apps"))
        }
    }

    static func page(
        _ oauth: OAuthServices, _ request: HTTPRequest, accountID: UUID, notice: String?,
        status: HTTPStatus = .ok
    ) throws -> HTTPResponse {
        let consents = try OAuthStore.consents(accountID: accountID, on: oauth.pool)
        let (context, cookie) = oauth.pageContext(request)
        let html = LoginPages.connectedApps(
            ConnectedAppsPage(
                context: context,
                apps: consents.map {
                    .init(
                        clientID: $0.clientID, name: oauth.clientName($0.clientID), scopes: $0.scopes,
                        grantedAt: $0.grantedAt)
                }, notice: notice))
        return OAuthServices.page(html, status: status, cookie: cookie)
    }
}
