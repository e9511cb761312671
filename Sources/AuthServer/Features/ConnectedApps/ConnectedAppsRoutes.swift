import Foundation
import HTTPServer
import LoginPages

/// `GET /account/apps` and `POST /account/apps/revoke` (see `ConnectedAppsFlow`).
struct ConnectedAppsRoutes: Sendable {
    let flow: ConnectedAppsFlow
    private var oauth: OAuthServices { flow.oauth }
    static let signIn = "/signin?return_to=%2Faccount%2Fapps"

    init(oauth: OAuthServices) {
        flow = ConnectedAppsFlow(oauth: oauth, store: PostgresConnectedAppsStore(db: oauth.pool))
    }

    func register(on router: Router) {
        let routes = self
        router.get("/account/apps") { request, _ in try routes.list(request) }
        router.post("/account/apps/revoke") { request, _ in try routes.revoke(request) }
    }

    func list(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let session = try oauth.accounts.sessions.current(request) else {
            return OAuthServices.noStore(.redirect(to: Self.signIn))
        }
        return try page(request, accountID: session.accountID)
    }

    func revoke(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let session = try oauth.accounts.sessions.current(request) else {
            return OAuthServices.noStore(.redirect(to: Self.signIn))
        }
        let form = Pages.form(request)
        do {
            try oauth.accounts.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")
        } catch {
            return try page(request, accountID: session.accountID, status: .forbidden)
        }
        try flow.revoke(accountID: session.accountID, clientID: form["client_id"] ?? "")
        return OAuthServices.noStore(.redirect(to: "/account/apps"))
    }

    private func page(_ request: HTTPRequest, accountID: UUID, status: HTTPStatus = .ok) throws
        -> HTTPResponse
    {
        let apps = try flow.list(accountID: accountID)
        let (context, cookie) = oauth.pageContext(request)
        let html = LoginPages.connectedApps(
            ConnectedAppsPage(
                context: context,
                apps: apps.map {
                    .init(clientID: $0.clientID, name: $0.name, scopes: $0.scopes, grantedAt: $0.grantedAt)
                }, notice: nil))
        return OAuthServices.page(html, status: status, cookie: cookie)
    }
}
