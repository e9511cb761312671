import Foundation
import HTTPServer
import LoginPages
import WebAuthnCore

/// Creating an account: `POST /api/signup/password`, `POST /api/passkeys/signup/start` and
/// `…/finish` (JSON, see docs/api.md), and the `/signup` page with its plain form post.
struct SignUpRoutes: Sendable {
    let services: AccountServices

    struct PasswordSignUpRequest: Decodable {
        var email: String
        var displayName: String
        var password: String
        var returnTo: String?

        enum CodingKeys: String, CodingKey {
            case email
            case displayName = "display_name"
            case password
            case returnTo = "return_to"
        }
    }

    struct PasskeySignUpStartRequest: Decodable {
        var email: String?
        var displayName: String?

        enum CodingKeys: String, CodingKey {
            case email
            case displayName = "display_name"
        }
    }

    struct PasskeySignUpStart: Encodable {
        var registrationID: String
        var options: PublicKeyCredentialCreationOptionsJSON

        enum CodingKeys: String, CodingKey {
            case registrationID = "registration_id"
            case options
        }
    }

    struct PasskeySignUpFinishRequest: Decodable {
        var registrationID: String
        var email: String
        var displayName: String
        var credential: RegistrationResponseJSON
        var returnTo: String?

        enum CodingKeys: String, CodingKey {
            case registrationID = "registration_id"
            case email
            case displayName = "display_name"
            case credential
            case returnTo = "return_to"
        }
    }

    func register(on router: Router) {
        let routes = self
        let api = JSONAPI(router: router, services: services)
        api.add(.post, "/api/signup/password") { request, _ throws(APIError) in try routes.password(request) }
        api.add(.post, "/api/passkeys/signup/start") { request, _ throws(APIError) in
            try routes.startPasskey(request)
        }
        api.add(.post, "/api/passkeys/signup/finish") { request, _ throws(APIError) in
            try routes.finishPasskey(request)
        }
        router.get("/signup") { request, _ in routes.page(request) }
        router.post("/signup") { request, _ in routes.submit(request) }
    }

    private var flow: SignUpFlow { SignUpFlow(services: services) }

    func password(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(PasswordSignUpRequest.self, request)
        let signedUp = try flow.password(
            email: body.email, displayName: body.displayName, password: body.password, request: request)
        return try Self.created(signedUp, returnTo: body.returnTo)
    }

    func startPasskey(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(PasskeySignUpStartRequest.self, request)
        let started = try flow.startPasskey(email: body.email, displayName: body.displayName)
        return try JSONAPI.json(
            PasskeySignUpStart(registrationID: started.registrationID.lowercased, options: started.options))
    }

    func finishPasskey(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(PasskeySignUpFinishRequest.self, request)
        let signedUp = try flow.finishPasskey(
            registrationID: try JSONAPI.uuid(body.registrationID), email: body.email,
            displayName: body.displayName, credential: body.credential, request: request)
        return try Self.created(signedUp, returnTo: body.returnTo)
    }

    private static func created(_ signedUp: SignUpFlow.SignedUp, returnTo: String?) throws(APIError)
        -> HTTPResponse
    {
        var response = try JSONAPI.json(
            SignedInResponse(
                accountID: signedUp.accountID, session: signedUp.session,
                redirectTo: ReturnTo.sanitize(returnTo) ?? ReturnTo.fallback),
            status: .created)
        response.setCookie(signedUp.cookie)
        return response
    }

    func page(_ request: HTTPRequest) -> HTTPResponse {
        Pages.page(services, request) { context in
            var page = SignUpPage(
                context: context, email: request.queryValue("login_hint") ?? "",
                returnTo: ReturnTo.sanitize(request.queryValue("return_to")),
                uiLocales: request.queryValue("ui_locales"))
            page.passwordSignUp = services.configuration.passwordless.passwordSignUp
            page.upstreamButtons = UpstreamSignInFlow.buttons(services.configuration)
            return LoginPages.signUp(page)
        }
    }

    func submit(_ request: HTTPRequest) -> HTTPResponse {
        let form = Pages.form(request)
        guard (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil
        else {
            return failure(form, request, .csrfFailed, .forbidden)
        }
        do throws(APIError) {
            let signedUp = try flow.password(
                email: form["email"] ?? "", displayName: form["display_name"] ?? "",
                password: form["password"] ?? "", request: request)
            var response = Pages.noStore(
                .redirect(to: ReturnTo.sanitize(form["return_to"]) ?? ReturnTo.fallback))
            response.setCookie(signedUp.cookie)
            return response
        } catch {
            var response = failure(form, request, Self.message(for: error), error.status)
            if let retryAfter = error.headers["Retry-After"] {
                response.headers.set("Retry-After", retryAfter)
            }
            return response
        }
    }

    /// The form's sentence for an API error; nil: password sign-up is off.
    private static func message(for error: APIError) -> Strings.Key? {
        switch error.code {
        case "password_sign_up_disabled": nil
        case "too_many_requests": .tooManyAttempts
        case "invalid_email": .invalidEmail
        case "invalid_display_name": .invalidDisplayName
        case "weak_password": .weakPassword
        default: .busy
        }
    }

    /// The form again, filled in, with `error` (nil: the password-sign-up-disabled message).
    private func failure(
        _ form: [String: String], _ request: HTTPRequest, _ error: Strings.Key?, _ status: HTTPStatus
    )
        -> HTTPResponse
    {
        Pages.page(services, request, uiLocales: form["ui_locales"], status: status) { context in
            var page = SignUpPage(
                context: context, email: form["email"] ?? "", displayName: form["display_name"] ?? "",
                returnTo: ReturnTo.sanitize(form["return_to"]), uiLocales: form["ui_locales"], error: error)
            page.passwordSignUp = services.configuration.passwordless.passwordSignUp
            page.upstreamButtons = UpstreamSignInFlow.buttons(services.configuration)
            if error == nil { page.errorMessage = RecoveryStrings(context.language)[.passwordSignUpDisabled] }
            return LoginPages.signUp(page)
        }
    }
}
