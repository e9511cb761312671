import HTTPServer
import LoginPages
import OIDC

/// `GET|POST /authorize` and `POST /authorize/consent` (see `AuthorizeFlow`).
struct AuthorizeRoutes: Sendable {
    let flow: AuthorizeFlow
    private var oauth: OAuthServices { flow.oauth }

    init(oauth: OAuthServices) {
        flow = AuthorizeFlow(
            oauth: oauth, store: PostgresAuthorizeStore(db: oauth.pool, sessions: oauth.accounts.sessions))
    }

    func register(on router: Router) {
        let routes = self
        router.get("/authorize") { request, _ in
            routes.authorize(request) { () throws(HTTPError) in try request.decodedQuery() }
        }
        router.post("/authorize") { request, _ in
            routes.authorize(request) { () throws(HTTPError) in try request.formItems() }
        }
        router.post("/authorize/consent") { request, _ in routes.consent(request) }
    }

    /// The request's parameters come from the query (GET) or the form body (POST).
    func authorize(_ request: HTTPRequest, items: () throws(HTTPError) -> AuthorizeFlow.Items) -> HTTPResponse
    {
        do {
            return respond(try flow.authorize(try items(), sessionToken: sessionToken(request)), to: request)
        } catch {
            return BrowserOAuthError(error, failureEvent: "authorize.failed", log: oauth.log)
                .response(to: request, oauth)
        }
    }

    /// The consent page posts the answer, its CSRF token and the request's own parameters.
    func consent(_ request: HTTPRequest) -> HTTPResponse {
        do {
            let items = try BrowserOAuthError.verifiedForm(
                request, csrf: oauth.accounts.csrf,
                expired: OAuthError(
                    .accessDenied, hint: "The consent form expired; start again from the application."))
            guard
                let answer = items.first(where: { $0.name == "decision" }).flatMap({
                    AuthorizeFlow.ConsentAnswer(rawValue: $0.value)
                })
            else {
                throw BrowserOAuthError.page(
                    OAuthError(.invalidRequest, hint: "No consent decision was sent."))
            }
            let kept = items.filter { $0.name != "decision" && $0.name != CSRFProtection.formField }
            return respond(
                try flow.authorize(kept, sessionToken: sessionToken(request), consent: answer), to: request)
        } catch {
            return BrowserOAuthError(error, failureEvent: "authorize.failed", log: oauth.log)
                .response(to: request, oauth)
        }
    }

    private func sessionToken(_ request: HTTPRequest) -> String? {
        request.cookies[oauth.accounts.sessions.cookies.sessionName]
    }

    private func respond(_ outcome: AuthorizeFlow.Outcome, to request: HTTPRequest) -> HTTPResponse {
        switch outcome {
        case .code(let response, let uiLocales):
            return oauth.authorizationResponse(response, to: request, uiLocales: uiLocales)
        case .signIn(let location):
            return OAuthServices.noStore(.redirect(to: location))
        case .consent(let prompt):
            let (context, cookie) = oauth.pageContext(request, uiLocales: prompt.uiLocales)
            var page = ConsentPage(
                context: context, clientName: prompt.clientName, scopes: prompt.scopes,
                accountEmail: prompt.accountEmail, action: "/authorize/consent",
                hiddenFields: prompt.hiddenFields, switchAccountLink: prompt.switchAccountLink)
            page.apiScopes = prompt.apiScopes
            let html = LoginPages.consent(page)
            return OAuthServices.page(html, cookie: cookie)
        }
    }
}
