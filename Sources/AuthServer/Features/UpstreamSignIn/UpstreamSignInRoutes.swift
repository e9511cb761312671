import Foundation
import HTTPServer
import LoginPages

/// Signing in through upstream providers, without script:
///
/// - `GET /upstream/<id>/start`: from the buttons of /signin and /signup (`return_to`,
///   `ui_locales`), on to the provider.
/// - `POST /upstream/<id>/link`: "Link <provider>" on /account (CSRF token, recent sign-in).
/// - `GET /upstream/<id>/callback`: a generic provider's answer (a top-level navigation, so the
///   SameSite=Lax binding cookie comes with it).
/// - `POST /upstream/<id>/callback`: Apple's `form_post` answer, a cross-site POST that carries
///   no Lax cookie: only the state is checked (open, this provider's), and the answer is
///   relayed by a same-origin auto-submitting form to `POST /upstream/<id>/continue`, where the
///   binding cookie is checked and the request is used. See docs/security.md.
/// - `GET`/`POST /upstream/link`: proving control of the account that holds the address.
struct UpstreamSignInRoutes: Sendable {
    let oauth: OAuthServices

    var services: AccountServices { oauth.accounts }
    private var flow: UpstreamSignInFlow { UpstreamSignInFlow(oauth: oauth) }

    func register(on router: Router) {
        let routes = self
        router.get("/upstream/link") { request, _ in routes.pendingPage(request) }
        router.post("/upstream/link") { request, _ in routes.completeLink(request) }
        router.get("/upstream/:provider/start") { request, context in
            routes.start(request, provider: context.pathParameters["provider"] ?? "")
        }
        router.post("/upstream/:provider/link") { request, context in
            routes.startLink(request, provider: context.pathParameters["provider"] ?? "")
        }
        router.get("/upstream/:provider/callback") { request, context in
            routes.finish(
                request, provider: context.pathParameters["provider"] ?? "",
                answer: UpstreamSignInFlow.Answer(
                    state: request.queryValue("state"), code: request.queryValue("code"),
                    error: request.queryValue("error"), user: nil))
        }
        router.post("/upstream/:provider/callback") { request, context in
            routes.relay(request, provider: context.pathParameters["provider"] ?? "")
        }
        router.post("/upstream/:provider/continue") { request, context in
            routes.continueRelayed(request, provider: context.pathParameters["provider"] ?? "")
        }
    }

    // MARK: Cookies

    private var bindingName: String { services.cookies.secure ? "__Host-upstream" : "upstream" }
    private var pendingName: String { services.cookies.secure ? "__Host-upstream-link" : "upstream-link" }

    private func cookie(_ name: String, _ value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: name, value: value, path: "/", maxAge: maxAge, secure: services.cookies.secure,
            httpOnly: true,
            sameSite: .lax)
    }

    // MARK: Start

    func start(_ request: HTTPRequest, provider: String) -> HTTPResponse {
        let returnTo = ReturnTo.sanitize(request.queryValue("return_to")) ?? ReturnTo.fallback
        do {
            return redirect(
                request,
                try flow.start(
                    providerID: provider, purpose: .signIn, accountID: nil, returnTo: returnTo,
                    uiLocales: request.queryValue("ui_locales"), binding: request.cookies[bindingName]))
        } catch {
            return refusal(request, error, status: error.status)
        }
    }

    func startLink(_ request: HTTPRequest, provider: String) -> HTTPResponse {
        let form = Pages.form(request)
        guard (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil
        else {
            return refusal(request, .failed("csrf"), status: .forbidden)
        }
        // A new way in is a credential change: a recent sign-in, as for a passkey or password.
        guard let session = try? services.requireRecentSession(request) else {
            return Pages.noStore(.redirect(to: "/signin?prompt=login&return_to=%2Faccount"))
        }
        do {
            return redirect(
                request,
                try flow.start(
                    providerID: provider, purpose: .link, accountID: session.accountID, returnTo: "/account",
                    uiLocales: nil, binding: request.cookies[bindingName]))
        } catch {
            return refusal(request, error, status: error.status)
        }
    }

    private func redirect(_ request: HTTPRequest, _ started: UpstreamSignInFlow.Started) -> HTTPResponse {
        var response = Pages.noStore(.redirect(to: started.location))
        if request.cookies[bindingName] != started.binding {
            response.setCookie(cookie(bindingName, started.binding, maxAge: 86_400))
        }
        return response
    }

    // MARK: Callback

    /// Apple's form_post: check only that the state names an open request of this provider,
    /// then hand the fields to a same-origin form; nothing is used or changed here.
    func relay(_ request: HTTPRequest, provider: String) -> HTTPResponse {
        let form = Pages.form(request)
        guard flow.isOpen(providerID: provider, state: form["state"]) else {
            return refusal(request, .expired, status: .badRequest)
        }
        var fields: [(name: String, value: String)] = []
        for name in ["state", "code", "error", "user"] {
            if let value = form[name] { fields.append((name, value)) }
        }
        let (context, _) = oauth.pageContext(request)
        let html = LoginPages.formPost(
            FormPostPage(context: context, action: "/upstream/\(provider)/continue", fields: fields))
        return OAuthServices.page(html)
    }

    /// The relayed answer: a same-origin POST (the Origin checks of every other form apply),
    /// which carries the binding cookie.
    func continueRelayed(_ request: HTTPRequest, provider: String) -> HTTPResponse {
        if let origin = request.headers["Origin"], origin != oauth.configuration.issuerOrigin,
            origin != "null"
        {
            return refusal(request, .otherBrowser, status: .forbidden)
        }
        if let site = request.headers["Sec-Fetch-Site"]?.lowercased(),
            site == "cross-site" || site == "same-site"
        {
            return refusal(request, .otherBrowser, status: .forbidden)
        }
        let form = Pages.form(request)
        return finish(
            request, provider: provider,
            answer: UpstreamSignInFlow.Answer(
                state: form["state"], code: form["code"], error: form["error"], user: form["user"]))
    }

    func finish(_ request: HTTPRequest, provider: String, answer: UpstreamSignInFlow.Answer) -> HTTPResponse {
        let outcome: UpstreamSignInFlow.Outcome
        do {
            outcome = try flow.finish(
                providerID: provider, answer: answer, binding: request.cookies[bindingName], request: request)
        } catch {
            return refusal(request, error, status: error.status)
        }
        switch outcome {
        case .signedIn(let accountID, let sessionCookie, let destination):
            var response = Pages.noStore(.redirect(to: destination))
            response.setCookie(sessionCookie)
            if let accounts = try? services.sessions.accountsCookie(afterSignInOf: accountID, request) {
                response.setCookie(accounts)
            }
            return response
        case .linked(let destination):
            return Pages.noStore(.redirect(to: destination))
        case .throttled(let wait):
            var response = refusal(
                request, .failed("too_many_sign_ups"), status: .tooManyRequests, message: .tooMany)
            response.headers.set("Retry-After", String(wait))
            return response
        case .proveControl(let token, let email, let label, let uiLocales):
            let returnTo = "/upstream/link"
            var query = URLComponents()
            query.path = "/signin"
            query.queryItems = [
                URLQueryItem(name: "prompt", value: "login"), URLQueryItem(name: "login_hint", value: email),
                URLQueryItem(name: "return_to", value: returnTo),
            ]
            if let uiLocales { query.queryItems?.append(URLQueryItem(name: "ui_locales", value: uiLocales)) }
            var response = Pages.page(services, request, uiLocales: uiLocales) { context in
                LoginPages.upstreamProveControl(
                    UpstreamProveControlPage(
                        context: context, providerLabel: label, email: email,
                        signInLink: query.string ?? "/signin"))
            }
            response.setCookie(
                cookie(pendingName, token, maxAge: Int(UpstreamSignInFlow.pendingLinkLifetime)))
            return response
        }
    }

    // MARK: Proof of control

    /// After the sign-in: the confirmation when the right account signed in; otherwise the
    /// explanation (another account linked nothing), or the sign-in link again.
    func pendingPage(_ request: HTTPRequest) -> HTTPResponse {
        let view: UpstreamSignInFlow.PendingView
        do {
            view = try flow.pending(token: request.cookies[pendingName], request: request)
        } catch {
            return refusal(request, error, status: error.status)
        }
        guard let accountEmail = view.accountEmail else {
            if let session = try? services.sessions.current(request), session.accountID != view.link.accountID
            {
                return refusal(request, .notSignedIn, status: .forbidden, message: .linkWrongAccount)
            }
            var query = URLComponents()
            query.path = "/signin"
            query.queryItems = [
                URLQueryItem(name: "prompt", value: "login"),
                URLQueryItem(name: "login_hint", value: view.link.claims.email ?? ""),
                URLQueryItem(name: "return_to", value: "/upstream/link"),
            ]
            return Pages.page(services, request) { context in
                LoginPages.upstreamProveControl(
                    UpstreamProveControlPage(
                        context: context, providerLabel: view.providerLabel,
                        email: view.link.claims.email ?? "",
                        signInLink: query.string ?? "/signin"))
            }
        }
        return Pages.page(services, request) { context in
            LoginPages.upstreamLink(
                UpstreamLinkPage(
                    context: context, providerLabel: view.providerLabel, email: view.link.claims.email ?? "",
                    accountEmail: accountEmail))
        }
    }

    func completeLink(_ request: HTTPRequest) -> HTTPResponse {
        let form = Pages.form(request)
        guard (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil
        else {
            return refusal(request, .failed("csrf"), status: .forbidden)
        }
        do {
            let destination = try flow.completePendingLink(
                token: request.cookies[pendingName], request: request)
            var response = Pages.noStore(.redirect(to: destination))
            response.setCookie(
                Cookie.expired(
                    name: pendingName, path: "/", secure: services.cookies.secure, httpOnly: true,
                    sameSite: .lax))
            return response
        } catch {
            let message: UpstreamStrings.Key? = error == .notSignedIn ? .linkWrongAccount : nil
            return refusal(request, error, status: error.status, message: message)
        }
    }

    // MARK: Errors

    private func refusal(
        _ request: HTTPRequest, _ refusal: UpstreamSignInFlow.Refusal, status: HTTPStatus,
        message: UpstreamStrings.Key? = nil
    ) -> HTTPResponse {
        Pages.page(services, request, status: status) { context in
            let s = UpstreamStrings(context.language)
            return LoginPages.error(
                ErrorPage(
                    context: context, title: s[.failedTitle], message: s[message ?? refusal.message],
                    backLink: "/signin", code: Self.code(refusal)))
        }
    }

    private static func code(_ refusal: UpstreamSignInFlow.Refusal) -> String {
        switch refusal {
        case .unknownProvider: "unknown_provider"
        case .unavailable: "temporarily_unavailable"
        case .expired: "invalid_state"
        case .otherBrowser: "other_browser"
        case .cancelled: "access_denied"
        case .failed(let reason): "upstream_failed:\(reason)"
        case .disabled: "account_disabled"
        case .alreadyLinkedElsewhere: "already_linked"
        case .notSignedIn: "not_signed_in"
        }
    }
}
