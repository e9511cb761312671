import Foundation
import HTTPServer

/// Signing out (`POST /api/signout`, and `POST /signout` for the pages' form) and the CSRF
/// token the pages' scripts send with every state-changing call (`GET /api/csrf`).
struct SignOutRoutes: Sendable {
    let services: AccountServices

    struct CSRFToken: Encodable {
        var csrfToken: String

        enum CodingKeys: String, CodingKey {
            case csrfToken = "csrf_token"
        }
    }

    func register(on router: Router) {
        let routes = self
        router.get("/api/csrf") { request, _ in try routes.csrfToken(request) }
        JSONAPI(router: router, services: services).add(.post, "/api/signout") {
            request, _ throws(APIError) in
            try routes.signOut(request)
        }
        router.post("/signout") { request, _ in try routes.submit(request) }
    }

    private var flow: SignOutFlow { SignOutFlow(services: services) }

    func csrfToken(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let (token, cookie) = services.csrf.token(for: request)
        var response = try JSONAPI.json(CSRFToken(csrfToken: token))
        if let cookie { response.setCookie(cookie) }
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    func signOut(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let session = try services.requireSession(request)
        try flow.signOut(session, clientAddress: request.remoteAddress)
        var response = HTTPResponse(status: .noContent)
        for cookie in remaining(request) { response.setCookie(cookie) }
        return response
    }

    /// The form post: a signed-out browser (or a forged post) just goes on to the page.
    func submit(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = Pages.form(request)
        guard (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil
        else {
            return Pages.noStore(.redirect(to: "/account"))
        }
        if let session = try services.sessions.current(request) {
            try flow.end(session, clientAddress: request.remoteAddress)
        }
        let cookies = remaining(request)
        // Other accounts still signed in here: the chooser shows them (and "sign out of all").
        let others = !BrowserSessions(request, cookies: services.cookies).others.isEmpty
        var response = Pages.noStore(.redirect(to: others ? "/accounts" : "/signin"))
        for cookie in cookies { response.setCookie(cookie) }
        return response
    }

    /// The cookies after the current account signed out: the browser's other accounts stay
    /// signed in, the most recently current of them becomes current.
    private func remaining(_ request: HTTPRequest) -> [Cookie] {
        let browser = BrowserSessions(request, cookies: services.cookies)
        guard let current = browser.current else { return browser.cookies(services.cookies) }
        return browser.removing(current).cookies(services.cookies)
    }
}
