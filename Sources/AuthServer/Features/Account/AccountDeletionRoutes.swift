import Foundation
import HTTPServer
import LoginPages

/// The account holder's own deletion: `DELETE /api/account` (JSON, CSRF, recent sign-in), the
/// warning page `/account/delete` and the goodbye page `/account/deleted`. See docs/api.md.
struct AccountDeletionRoutes: Sendable {
    let services: AccountServices

    struct DeletionRequest: Decodable {
        /// The account's email address, typed again as the confirmation.
        var email: String?
    }

    struct DeletionResponse: Encodable {
        var deleted: Bool
    }

    private var flow: AccountDeletionFlow {
        AccountDeletionFlow(services: services, store: PostgresAccountDeletionStore(db: services.pool))
    }

    func register(on router: Router) {
        let routes = self
        let api = JSONAPI(router: router, services: services)
        api.add(.delete, "/api/account", step: "account.delete", delete)
        router.get("/account/delete") { request, _ in try routes.warningPage(request) }
        router.get("/account/deleted") { request, _ in
            Pages.page(routes.services, request) { context in
                LoginPages.lifecycleNotice(
                    context, title: .deletedTitle, lead: .deletedLead, link: (.backToSignIn, "/signin"))
            }
        }
    }

    /// 200 `{"deleted": true}` with the session cookie cleared (the browser's other signed-in
    /// accounts stay). Apple's refresh tokens of the account, queued in the deletion's
    /// transaction, are revoked at Apple by `UpstreamRevocationWorker` (Apple requires it).
    func delete(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireRecentSession(request)
        let body = try JSONAPI.decode(DeletionRequest.self, request)
        _ = try flow.delete(session: session, confirmation: body.email, request: request)
        var response = try JSONAPI.json(DeletionResponse(deleted: true))
        let browser = BrowserSessions(request, cookies: services.cookies)
        let remaining = browser.current.map { browser.removing($0) } ?? browser
        for cookie in remaining.cookies(services.cookies) { response.setCookie(cookie) }
        return response
    }

    func warningPage(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let session = try services.sessions.current(request),
            let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
        else {
            return Pages.noStore(.redirect(to: "/signin?return_to=%2Faccount%2Fdelete"))
        }
        let passkeys = try PasskeyStore.list(accountID: account.id, on: services.pool)
        return Pages.page(services, request) { context in
            LoginPages.accountDeletion(
                AccountDeletionPage(
                    context: context, email: account.email, hasPassword: account.hasPassword,
                    hasPasskeys: !passkeys.isEmpty))
        }
    }
}
