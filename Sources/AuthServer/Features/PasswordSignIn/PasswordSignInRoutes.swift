import Foundation
import HTTPServer
import LoginPages

/// Password sign-in: `POST /api/signin/password` (JSON, see docs/api.md) and the `/signin`
/// page with its plain form post, which works without JavaScript.
///
/// `/signin` honours `return_to` (a same-origin relative path), `login_hint` (prefills the
/// email) and `ui_locales`; with `prompt=login` it shows the form even to a signed-in user.
struct PasswordSignInRoutes: Sendable {
    let services: AccountServices

    struct SignInRequest: Decodable {
        var email: String
        var password: String
        var returnTo: String?

        enum CodingKeys: String, CodingKey {
            case email
            case password
            case returnTo = "return_to"
        }
    }

    func register(on router: Router) {
        let routes = self
        JSONAPI(router: router, services: services).add(.post, "/api/signin/password") {
            request, _ throws(APIError) in
            try routes.signIn(request)
        }
        router.get("/signin") { request, _ in routes.page(request) }
        router.post("/signin") { request, _ in try routes.submit(request) }
    }

    private var flow: PasswordSignInFlow { PasswordSignInFlow(services: services) }

    func signIn(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(SignInRequest.self, request)
        let returnTo = ReturnTo.sanitize(body.returnTo) ?? ReturnTo.fallback
        switch try flow.signIn(
            email: body.email, password: body.password, returnTo: returnTo, offerUpgrade: true,
            request: request)
        {
        case .throttled(let wait): throw APIError.passwordThrottled(retryAfter: wait)
        case .invalid: throw APIError.invalidCredentials
        case .passkeyRequired: throw PasswordlessPolicyEnforcement.passkeyRequired
        case .signedIn(let signedIn):
            var response = try JSONAPI.json(
                SignedInResponse(
                    accountID: signedIn.accountID, session: signedIn.session,
                    redirectTo: signedIn.destination,
                    passkeyUpgrade: signedIn.passkeyUpgrade))
            response.setCookie(signedIn.cookie)
            response.setCookie(
                try services.guarded("signin.accounts") {
                    try services.sessions.accountsCookie(afterSignInOf: signedIn.accountID, request)
                })
            return response
        }
    }

    /// The form, or straight on to `return_to` for a browser already signed in.
    func page(_ request: HTTPRequest) -> HTTPResponse {
        let returnTo = ReturnTo.sanitize(request.queryValue("return_to"))
        if request.queryValue("prompt") != "login", (try? services.sessions.current(request)) ?? nil != nil {
            return Pages.noStore(.redirect(to: returnTo ?? ReturnTo.fallback))
        }
        return Pages.page(services, request) { context in
            var page = SignInPage(
                context: context, email: request.queryValue("login_hint") ?? "", returnTo: returnTo,
                uiLocales: request.queryValue("ui_locales"))
            // `AuthorizationInteraction.login` adds `step_up=passkey` for an `acr` step-up.
            page.stepUp = request.queryValue("step_up") == "passkey"
            page.upstreamButtons = UpstreamSignInFlow.buttons(services.configuration)
            return LoginPages.signIn(page)
        }
    }

    func submit(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let form = Pages.form(request)
        let returnTo = ReturnTo.sanitize(form["return_to"])
        guard (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil
        else {
            return failure(form, request, .csrfFailed, .forbidden)
        }
        do throws(APIError) {
            switch try flow.signIn(
                email: form["email"] ?? "", password: form["password"] ?? "",
                returnTo: returnTo ?? ReturnTo.fallback, offerUpgrade: false, request: request)
            {
            case .invalid: return failure(form, request, .invalidCredentials, .unauthorized)
            case .passkeyRequired: return failure(form, request, nil, .forbidden)
            case .throttled(let wait):
                var response = failure(form, request, .passwordLocked, .tooManyRequests)
                response.headers.set("Retry-After", String(wait))
                return response
            case .signedIn(let signedIn):
                var response = Pages.noStore(.redirect(to: signedIn.destination))
                response.setCookie(signedIn.cookie)
                response.setCookie(
                    try services.guarded("signin.accounts") {
                        try services.sessions.accountsCookie(afterSignInOf: signedIn.accountID, request)
                    })
                return response
            }
        } catch  where error.code == APIError.busy.code {
            return failure(form, request, .busy, .serviceUnavailable)
        }
    }

    /// The form again, filled in, with `error` (nil: the passkey-required message).
    private func failure(
        _ form: [String: String], _ request: HTTPRequest, _ error: Strings.Key?, _ status: HTTPStatus
    )
        -> HTTPResponse
    {
        Pages.page(services, request, uiLocales: form["ui_locales"], status: status) { context in
            var page = SignInPage(
                context: context, email: form["email"] ?? "", returnTo: ReturnTo.sanitize(form["return_to"]),
                uiLocales: form["ui_locales"], error: error)
            page.upstreamButtons = UpstreamSignInFlow.buttons(services.configuration)
            if error == nil { page.errorMessage = RecoveryStrings(context.language)[.passkeyRequired] }
            return LoginPages.signIn(page)
        }
    }
}
