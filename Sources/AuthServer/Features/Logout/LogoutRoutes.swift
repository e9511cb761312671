import HTTPServer
import LoginPages
import OIDC

/// `GET|POST /logout` and `POST /logout/confirm` (see `LogoutFlow`).
struct LogoutRoutes: Sendable {
    let flow: LogoutFlow
    private var oauth: OAuthServices { flow.oauth }

    init(oauth: OAuthServices) {
        flow = LogoutFlow(oauth: oauth, store: PostgresLogoutStore(sessions: oauth.accounts.sessions))
    }

    func register(on router: Router) {
        let routes = self
        router.get("/logout") { request, _ in
            routes.logout(request) { () throws(HTTPError) in try request.decodedQuery() }
        }
        router.post("/logout") { request, _ in
            routes.logout(request) { () throws(HTTPError) in try request.formItems() }
        }
        router.post("/logout/confirm") { request, _ in routes.confirm(request) }
    }

    /// The request's parameters come from the query (GET) or the form body (POST).
    func logout(_ request: HTTPRequest, items: () throws(HTTPError) -> LogoutFlow.Items) -> HTTPResponse {
        do {
            let items = try items()
            let outcome = try flow.start(items, browser: browser(request), clientAddress: request.remoteAddress)
            // The confirmation page posts these fields back: the request may not carry the
            // user's answer, nor a CSRF token, into them.
            return respond(outcome, fields: items.filter { !Self.pageFields.contains($0.name) }, to: request)
        } catch {
            return BrowserOAuthError(error, failureEvent: "logout.failed", log: oauth.log)
                .response(to: request, oauth)
        }
    }

    /// The confirmation page posts the answer, its CSRF token and the request's own parameters.
    func confirm(_ request: HTTPRequest) -> HTTPResponse {
        do {
            let items = try BrowserOAuthError.verifiedForm(
                request, csrf: oauth.accounts.csrf,
                expired: OAuthError(.invalidRequest, hint: "The sign-out form expired; try again."))
            // The user's answer: one "yes" from the page's button. An answer posted twice is
            // not one, and keeps the session.
            let answers = items.filter { $0.name == "confirm" }
            let confirmed = answers.count == 1 && answers[0].value == "yes"
            let kept = items.filter { !Self.pageFields.contains($0.name) }
            let outcome = try flow.confirm(
                kept, confirmed: confirmed, browser: browser(request), clientAddress: request.remoteAddress)
            return respond(outcome, fields: kept, to: request)
        } catch {
            return BrowserOAuthError(error, failureEvent: "logout.failed", log: oauth.log)
                .response(to: request, oauth)
        }
    }

    /// The fields the confirmation page adds itself: its answer buttons and its CSRF token.
    private static let pageFields: Set<String> = ["confirm", CSRFProtection.formField]

    private func browser(_ request: HTTPRequest) -> BrowserSessions {
        BrowserSessions(request, cookies: oauth.accounts.sessions.cookies)
    }

    private func respond(_ outcome: LogoutFlow.Outcome, fields: LogoutFlow.Items, to request: HTTPRequest)
        -> HTTPResponse
    {
        let (context, cookie) = oauth.pageContext(request, uiLocales: outcome.uiLocales)
        switch outcome.step {
        case .nothingToEnd(let redirect):
            if let redirect { return OAuthServices.noStore(.redirect(to: redirect)) }
            return OAuthServices.page(LoginPages.signedOut(context), cookie: cookie)
        case .confirm:
            let html = LoginPages.logoutConfirmation(
                LogoutConfirmationPage(context: context, clientName: outcome.clientName, fields: fields))
            return OAuthServices.page(html, cookie: cookie)
        case .declined(let redirect):
            if let redirect { return OAuthServices.noStore(.redirect(to: redirect)) }
            return OAuthServices.page(LoginPages.signedOut(context, stillSignedIn: true))
        case .end(let redirect):
            var response =
                redirect.map { OAuthServices.noStore(.redirect(to: $0)) }
                ?? OAuthServices.page(LoginPages.signedOut(context))
            for cookie in outcome.browser?.cookies(oauth.accounts.cookies) ?? [] { response.setCookie(cookie) }
            return response
        }
    }
}
