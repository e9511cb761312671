import Crypto
import Foundation
import HTTPServer
import LoginPages

/// The server-rendered pages: `/signin`, `/signup`, `/account`, and the plain form posts that
/// make sign-in, sign-up and sign-out work without JavaScript.
///
/// `/signin` honours `return_to` (a same-origin relative path), `login_hint` (prefills the
/// email) and `ui_locales`; with `prompt=login` it shows the form even to a signed-in user.
struct PageRoutes: Sendable {
    let services: AccountServices

    func register(on router: Router) {
        let services = services
        router.get("/") { _, _ in HTTPResponse.redirect(to: "/account") }

        router.get("/signin") { request, _ in
            let returnTo = ReturnTo.sanitize(request.queryValue("return_to"))
            if request.queryValue("prompt") != "login",
                (try? services.sessions.current(request)) ?? nil != nil
            {
                return Self.noStore(.redirect(to: returnTo ?? ReturnTo.fallback))
            }
            return Self.page(services, request) { context in
                LoginPages.signIn(
                    SignInPage(
                        context: context, email: request.queryValue("login_hint") ?? "", returnTo: returnTo,
                        uiLocales: request.queryValue("ui_locales")))
            }
        }

        router.post("/signin") { request, _ in
            let form = Self.form(request)
            let returnTo = ReturnTo.sanitize(form["return_to"])
            let email = form["email"] ?? ""
            let fail = { (error: Strings.Key, status: HTTPStatus) -> HTTPResponse in
                Self.page(services, request, uiLocales: form["ui_locales"], status: status) {
                    context in
                    LoginPages.signIn(
                        SignInPage(
                            context: context, email: email, returnTo: returnTo, uiLocales: form["ui_locales"],
                            error: error))
                }
            }
            do {
                try services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")
            } catch {
                return fail(.csrfFailed, .forbidden)
            }
            do {
                switch try services.passwordSignIn(
                    email: email, password: form["password"] ?? "", clientAddress: request.remoteAddress)
                {
                case .invalid:
                    return fail(.invalidCredentials, .unauthorized)
                case .passkeyRequired:
                    return Self.page(services, request, uiLocales: form["ui_locales"], status: .forbidden) {
                        context in
                        var page = SignInPage(
                            context: context, email: email, returnTo: returnTo, uiLocales: form["ui_locales"])
                        page.errorMessage = RecoveryStrings(context.language)[.passkeyRequired]
                        return LoginPages.signIn(page)
                    }
                case .throttled(let wait):
                    var response = fail(.passwordLocked, .tooManyRequests)
                    response.headers.set("Retry-After", String(wait))
                    return response
                case .signedIn(let accountID):
                    services.log.info(
                        "signin.password", ["step": "signedIn", "account": accountID.uuidString])
                    let (cookie, _) = try services.startSession(
                        accountID: accountID, amr: AuthenticationMethods.password, request: request)
                    let prompt = try PasswordlessPolicyEnforcement.countPasswordSignIn(
                        services.configuration.passwordless, accountID: accountID, on: services.pool)
                    var response = Self.noStore(
                        .redirect(
                            to: PasswordlessPolicyEnforcement.destination(
                                prompt: prompt, returnTo: returnTo ?? ReturnTo.fallback)))
                    response.setCookie(cookie)
                    return response
                }
            } catch let error as APIError where error.code == APIError.busy.code {
                return fail(.busy, .serviceUnavailable)
            }
        }

        router.get("/signup") { request, _ in
            let returnTo = ReturnTo.sanitize(request.queryValue("return_to"))
            return Self.page(services, request) { context in
                var page = SignUpPage(
                    context: context, email: request.queryValue("login_hint") ?? "", returnTo: returnTo,
                    uiLocales: request.queryValue("ui_locales"))
                page.passwordSignUp = services.configuration.passwordless.passwordSignUp
                return LoginPages.signUp(page)
            }
        }

        router.post("/signup") { request, _ in
            let form = Self.form(request)
            let returnTo = ReturnTo.sanitize(form["return_to"])
            let fail = { (error: Strings.Key?, status: HTTPStatus) -> HTTPResponse in
                Self.page(services, request, uiLocales: form["ui_locales"], status: status) { context in
                    var page = SignUpPage(
                        context: context, email: form["email"] ?? "",
                        displayName: form["display_name"] ?? "",
                        returnTo: returnTo, uiLocales: form["ui_locales"], error: error)
                    page.passwordSignUp = services.configuration.passwordless.passwordSignUp
                    if error == nil {
                        page.errorMessage = RecoveryStrings(context.language)[.passwordSignUpDisabled]
                    }
                    return LoginPages.signUp(page)
                }
            }
            do {
                try services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")
            } catch {
                return fail(.csrfFailed, .forbidden)
            }
            do {
                let accountID = try AuthenticationAPI.passwordSignUp(
                    services, email: form["email"] ?? "", displayName: form["display_name"] ?? "",
                    password: form["password"] ?? "", clientAddress: request.remoteAddress)
                services.emailVerification.sendAfterSignUp(accountID: accountID, request: request)
                let (cookie, _) = try services.startSession(
                    accountID: accountID, amr: AuthenticationMethods.password, request: request)
                var response = Self.noStore(.redirect(to: returnTo ?? ReturnTo.fallback))
                response.setCookie(cookie)
                return response
            } catch let error as APIError {
                let key: Strings.Key? =
                    switch error.code {
                    case "password_sign_up_disabled": nil
                    case "too_many_requests": .tooManyAttempts
                    case "invalid_email": .invalidEmail
                    case "invalid_display_name": .invalidDisplayName
                    case "weak_password": .weakPassword
                    default: .busy
                    }
                var response = fail(key, error.status)
                if let retryAfter = error.headers["Retry-After"] {
                    response.headers.set("Retry-After", retryAfter)
                }
                return response
            }
        }

        router.post("/signout") { request, _ in
            let form = Self.form(request)
            do {
                try services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")
            } catch {
                return Self.noStore(.redirect(to: "/account"))
            }
            if let session = try services.sessions.current(request) {
                try services.sessions.signOut(session, clientAddress: request.remoteAddress)
            }
            var response = Self.noStore(.redirect(to: "/signin"))
            response.setCookie(services.cookies.expiredSession())
            return response
        }

        router.get("/account") { request, _ in
            guard let session = try services.sessions.current(request),
                let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
            else {
                return Self.noStore(.redirect(to: "/signin?return_to=%2Faccount"))
            }
            let passkeys = try PasskeyStore.list(accountID: account.id, on: services.pool)
            let sessions = try services.sessions.list(accountID: account.id)
            let canRemove = account.hasPassword && passkeys.contains { $0.lastUsedAt != nil }
            let emailPrompt = try services.emailVerification.prompt(
                accountID: account.id, notice: request.queryValue("email"))
            return Self.page(services, request) { context in
                LoginPages.account(
                    AccountPage(
                        context: context, displayName: account.displayName, email: account.email,
                        rpID: services.rpID,
                        userID: Base64URL.encode(account.userHandle), hasPassword: account.hasPassword,
                        canRemovePassword: canRemove,
                        passkeys: passkeys.map {
                            AccountPage.Passkey(
                                id: $0.id.uuidString.lowercased(),
                                credentialID: Base64URL.encode($0.credentialID), name: $0.name,
                                provider: PasskeyProviders.name(forAAGUID: $0.aaguid), synced: $0.backedUp,
                                createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt)
                        },
                        sessions: sessions.map {
                            AccountPage.Session(
                                id: $0.id.uuidString.lowercased(),
                                device: UserAgentSummary.describe($0.userAgent),
                                createdAt: $0.createdAt, lastSeenAt: $0.lastSeenAt,
                                isCurrent: $0.id == session.id)
                        }, emailVerification: emailPrompt))
            }
        }
    }

    static func form(_ request: HTTPRequest) -> [String: String] {
        var values: [String: String] = [:]
        for item in (try? request.formItems()) ?? [] where values[item.name] == nil {
            values[item.name] = item.value
        }
        return values
    }

    static func noStore(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// Renders a page with a CSRF token (setting the cookie when the browser has none).
    static func page(
        _ services: AccountServices, _ request: HTTPRequest, uiLocales: String? = nil,
        status: HTTPStatus = .ok,
        _ render: (PageContext) -> String
    ) -> HTTPResponse {
        let (token, cookie) = services.csrf.token(for: request)
        var context = services.pageContext(request, csrfToken: token)
        if let uiLocales {
            context.language = PageLanguage.negotiate(
                uiLocales: uiLocales, acceptLanguage: request.headers["Accept-Language"])
        }
        var response = HTTPResponse.html(render(context), status: status)
        if let cookie { response.setCookie(cookie) }
        return noStore(response)
    }
}

/// A short description of a browser from its User-Agent, for the session list.
enum UserAgentSummary {
    static func describe(_ userAgent: String) -> String {
        let browser: String =
            if userAgent.contains("Edg/") { "Edge" } else if userAgent.contains("Firefox/") {
                "Firefox"
            } else if userAgent.contains("Chrome/") || userAgent.contains("Chromium/") {
                "Chrome"
            } else if userAgent.contains("Safari/") { "Safari" } else if userAgent.isEmpty {
                "Unknown browser"
            } else { "App" }
        let system: String? =
            if userAgent.contains("iPhone") { "iPhone" } else if userAgent.contains("iPad") {
                "iPad"
            } else if userAgent.contains("Android") { "Android" } else if userAgent.contains("Mac OS X") {
                "macOS"
            } else if userAgent.contains("Windows") { "Windows" } else if userAgent.contains("Linux") {
                "Linux"
            } else { nil }
        return system.map { "\(browser) on \($0)" } ?? browser
    }
}
