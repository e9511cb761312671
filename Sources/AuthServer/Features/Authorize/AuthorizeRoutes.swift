import Foundation
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
        router.post("/authorize/select") { request, _ in routes.select(request) }
    }

    /// The request's parameters come from the query (GET) or the form body (POST). A browser
    /// that arrives with a pushed request's `request_uri` and no binding cookie gets one: the
    /// request is bound to it at its first use (`PushedAuthorizationRequest`).
    func authorize(_ request: HTTPRequest, items: () throws(HTTPError) -> AuthorizeFlow.Items) -> HTTPResponse
    {
        do {
            let browser = browser(request)
            let all = try items()
            let existing = request.cookies[pushedBindingName]
            let fresh =
                existing == nil && all.contains(where: { $0.name == "request_uri" })
                ? oauth.tokens.next() : nil
            var response = respond(
                try flow.authorize(
                    all, sessionToken: browser.current, otherTokens: browser.others,
                    pushedBinding: existing ?? fresh),
                to: request)
            if let fresh {
                response.setCookie(
                    Cookie(
                        name: pushedBindingName, value: fresh, path: "/",
                        maxAge: PushedAuthorizationRequest.interactionSeconds,
                        secure: oauth.configuration.usesHTTPS,
                        httpOnly: true, sameSite: .lax))
            }
            return response
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
            // The one button pressed; a form that answers twice is no answer.
            let decisions = items.filter { $0.name == AuthorizeFlow.decisionField }
            guard decisions.count == 1, let answer = AuthorizeFlow.ConsentAnswer(rawValue: decisions[0].value) else {
                throw BrowserOAuthError.page(
                    OAuthError(.invalidRequest, hint: "No consent decision was sent."))
            }
            let selected = items.first { $0.name == AuthorizeFlow.accountSelectedField }.flatMap {
                UUID(uuidString: $0.value)
            }
            let browser = browser(request)
            return respond(
                try flow.authorize(
                    items, sessionToken: browser.current, otherTokens: browser.others, selected: selected,
                    consent: answer, pushedBinding: request.cookies[pushedBindingName]), to: request)
        } catch {
            return BrowserOAuthError(error, failureEvent: "authorize.failed", log: oauth.log)
                .response(to: request, oauth)
        }
    }

    /// The chooser posts the chosen session's id, its CSRF token and the request's own
    /// parameters. The chosen account becomes the browser's current one and the request goes
    /// on as that account. Only a session this browser holds can be chosen.
    func select(_ request: HTTPRequest) -> HTTPResponse {
        do {
            let items = try BrowserOAuthError.verifiedForm(
                request, csrf: oauth.accounts.csrf,
                expired: OAuthError(
                    .accessDenied, hint: "The account chooser expired; start again from the application."))
            let browser = browser(request)
            let accounts = try oauth.accounts.sessions.accounts(of: browser)
            // The one button pressed; a form that chooses twice is no choice.
            let presses = items.filter { $0.name == AuthorizeFlow.chosenSessionField }
            guard
                presses.count == 1, let id = UUID(uuidString: presses[0].value),
                let chosen = accounts.first(where: { $0.sessionID == id })
            else {
                // Not one of this browser's accounts (any more): the chooser again.
                return respond(
                    try flow.authorize(
                        items, sessionToken: browser.current, otherTokens: browser.others,
                        pushedBinding: request.cookies[pushedBindingName]),
                    to: request)
            }
            let switched = BrowserSessions(current: nil, others: accounts.map(\.token)).switching(
                to: chosen.token)
            var response = respond(
                try flow.authorize(
                    items, sessionToken: switched.current, otherTokens: switched.others,
                    selected: chosen.sessionID, pushedBinding: request.cookies[pushedBindingName]),
                to: request)
            for cookie in switched.cookies(oauth.accounts.cookies) { response.setCookie(cookie) }
            return response
        } catch {
            return BrowserOAuthError(error, failureEvent: "authorize.failed", log: oauth.log)
                .response(to: request, oauth)
        }
    }

    /// The cookie that binds pushed requests to the browser that started using them (`__Host-`
    /// under https: no sibling subdomain can plant it).
    private var pushedBindingName: String { oauth.configuration.usesHTTPS ? "__Host-par" : "par" }

    private func browser(_ request: HTTPRequest) -> BrowserSessions {
        BrowserSessions(request, cookies: oauth.accounts.sessions.cookies)
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
        case .chooseAccount(let prompt):
            let (context, cookie) = oauth.pageContext(request, uiLocales: prompt.uiLocales)
            let html = LoginPages.accountChooser(
                AccountChooserPage(
                    context: context, accounts: prompt.accounts.map(AccountChooserRoutes.row),
                    clientName: prompt.clientName, suggestedSessionID: prompt.suggested?.lowercased,
                    action: "/authorize/select", hiddenFields: prompt.hiddenFields,
                    useAnotherAccountLink: prompt.useAnotherAccountLink, signOutReturnTo: prompt.returnTo))
            return OAuthServices.page(html, cookie: cookie)
        }
    }
}
