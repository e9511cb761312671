import Foundation
import HTTPServer
import LoginPages
import WebAuthnCore

/// Account recovery as JSON (what /recover's script calls; see `RecoveryFlow` and
/// docs/api.md), and the pages of recovery and of the passwordless policy: `/recover`,
/// `/passkey-prompt`, and `/dev/mail` (registered only when mail goes to the development
/// mailbox, and shown only to requests from this machine).
struct RecoveryRoutes: Sendable {
    let services: AccountServices

    struct StartRequest: Decodable {
        var email: String
        var uiLocales: String?

        enum CodingKeys: String, CodingKey {
            case email
            case uiLocales = "ui_locales"
        }
    }

    /// One fixed answer, whatever the address: it must not tell whether an account exists.
    struct Started: Encodable, Equatable {
        var status = "accepted"
        var message =
            "If this address belongs to an account with a verified email address, a code is on its way."
    }

    struct VerifyRequest: Decodable {
        var email: String
        var code: String
    }

    struct Verified: Encodable {
        var status = "verified"
        var methods = ["passkey", "password"]
        var expiresIn: Int

        enum CodingKeys: String, CodingKey {
            case status
            case methods
            case expiresIn = "expires_in"
        }
    }

    struct PasswordRequest: Decodable {
        var newPassword: String

        enum CodingKeys: String, CodingKey {
            case newPassword = "new_password"
        }
    }

    struct OtherSessionsEnded: Encodable {
        var revoked: Int
    }

    private var flow: RecoveryFlow { RecoveryFlow(services: services) }
    private var cookies: RecoveryCookies { RecoveryCookies(services.configuration) }

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        let routes = self
        api.add(.post, "/api/recovery/start") { request, _ throws(APIError) in try routes.start(request) }
        api.add(.post, "/api/recovery/verify") { request, _ throws(APIError) in try routes.verify(request) }
        api.add(.post, "/api/recovery/passkey/start") { request, _ throws(APIError) in
            try routes.passkeyStart(request)
        }
        api.add(.post, "/api/recovery/passkey/finish") { request, _ throws(APIError) in
            try routes.passkeyFinish(request)
        }
        api.add(.post, "/api/recovery/password") { request, _ throws(APIError) in try routes.password(request)
        }
        api.add(.post, "/api/recovery/end-other-sessions") { request, _ throws(APIError) in
            try routes.endOtherSessions(request)
        }
        router.get("/recover") { request, _ in routes.recoverPage(request) }
        router.get("/passkey-prompt") { request, _ in try routes.passkeyPromptPage(request) }
        if let mailbox = services.mailer.transport as? DevelopmentMailbox {
            router.get("/dev/mail") { request, _ in try routes.developmentMailbox(request, mailbox) }
        }
    }

    // MARK: - JSON API

    /// `POST /api/recovery/start`: 202 with one fixed body.
    func start(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(StartRequest.self, request)
        guard let address = EmailAddress(body.email) else { throw APIError.invalidEmail }
        let language = PageLanguage.negotiate(
            uiLocales: body.uiLocales, acceptLanguage: request.headers["Accept-Language"])
        try flow.start(address, language: language, clientAddress: request.remoteAddress)
        return try JSONAPI.json(Started(), status: .accepted)
    }

    /// `POST /api/recovery/verify`: the recovery session's cookie.
    func verify(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(VerifyRequest.self, request)
        let token = try flow.verify(email: body.email, code: body.code, clientAddress: request.remoteAddress)
        var response = try JSONAPI.json(
            Verified(expiresIn: services.configuration.recovery.sessionLifetimeSeconds))
        response.setCookie(cookies.cookie(token))
        return response
    }

    /// `POST /api/recovery/passkey/start`: creation options for the recovery's account.
    func passkeyStart(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let recovery = try flow.session(token: recoveryToken(request))
        let offer = try flow.passkeyStart(recovery)
        let options = services.creationOptions(
            challenge: offer.challenge, userHandle: offer.account.userHandle, name: offer.account.email,
            displayName: offer.account.displayName, exclude: offer.existing, conditional: false)
        return try JSONAPI.json(
            PasskeyChallengeResponse(challengeID: offer.challengeID.lowercased, options: options))
    }

    /// `POST /api/recovery/passkey/finish`: signed in with the new passkey.
    func passkeyFinish(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let token = recoveryToken(request)
        let body = try JSONAPI.decode(PasskeyRegistrationFinishRequest.self, request)
        let challengeID = try JSONAPI.uuid(body.challengeID)
        let recovered = try flow.passkeyFinish(
            token: token, challengeID: challengeID, credential: body.credential, name: body.name,
            requester(request))
        return try signedIn(recovered)
    }

    /// `POST /api/recovery/password`: signed in with the new password.
    func password(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let token = recoveryToken(request)
        let recovery = try flow.session(token: token)
        let body = try JSONAPI.decode(PasswordRequest.self, request)
        let recovered = try flow.setPassword(
            body.newPassword, recovery: recovery, token: token, requester(request))
        return try signedIn(recovered)
    }

    /// `POST /api/recovery/end-other-sessions`: how many other sessions ended.
    func endOtherSessions(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let session = try services.requireSession(request)
        let revoked = try flow.endOtherSessions(session, clientAddress: request.remoteAddress)
        return try JSONAPI.json(OtherSessionsEnded(revoked: revoked))
    }

    private func recoveryToken(_ request: HTTPRequest) -> String { request.cookies[cookies.name] ?? "" }

    private func requester(_ request: HTTPRequest) -> RecoveryFlow.Requester {
        RecoveryFlow.Requester(
            clientAddress: request.remoteAddress, userAgent: request.headers["User-Agent"] ?? "",
            sessionToken: request.cookies[services.cookies.sessionName],
            language: PageLanguage.negotiate(
                uiLocales: nil, acceptLanguage: request.headers["Accept-Language"]))
    }

    /// The signed-in answer: the new session's cookie set, the recovery's cookie gone.
    private func signedIn(_ recovered: RecoveryFlow.Recovered) throws(APIError) -> HTTPResponse {
        var response = try JSONAPI.json(
            SignedInResponse(
                accountID: recovered.accountID.lowercased, sessionID: recovered.session.id.lowercased,
                redirectTo: ReturnTo.fallback, passkeyUpgrade: nil))
        response.setCookie(services.cookies.session(recovered.sessionToken))
        response.setCookie(cookies.expired())
        return response
    }

    // MARK: - Pages

    /// `GET /recover`
    func recoverPage(_ request: HTTPRequest) -> HTTPResponse {
        Pages.page(services, request) { context in
            LoginPages.recover(
                RecoverPage(
                    context: context, email: request.queryValue("email") ?? "",
                    uiLocales: request.queryValue("ui_locales")))
        }
    }

    /// `GET /passkey-prompt`: the passwordless policy's invitation to add a passkey.
    func passkeyPromptPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let returnTo = ReturnTo.sanitize(request.queryValue("return_to")) ?? ReturnTo.fallback
        guard try services.sessions.current(request) != nil else {
            return Pages.noStore(.redirect(to: "/signin"))
        }
        return Pages.page(services, request) { context in
            LoginPages.passkeyPrompt(PasskeyPromptPage(context: context, returnTo: returnTo))
        }
    }

    /// `GET /dev/mail`: every recovery and verification code is here, so only this machine
    /// may look.
    func developmentMailbox(_ request: HTTPRequest, _ mailbox: DevelopmentMailbox) throws -> HTTPResponse {
        guard Loopback.isLocal(request) else { throw HTTPError(.notFound) }
        let messages = mailbox.received().reversed().map {
            DevMailboxPage.Message(to: $0.to, subject: $0.subject, text: $0.text)
        }
        return Pages.page(services, request) { context in
            LoginPages.devMailbox(DevMailboxPage(context: context, messages: Array(messages)))
        }
    }
}

/// The recovery session's cookie: its own name, so no other endpoint ever reads it;
/// `SameSite=Strict` and the `__Host-` prefix under https.
struct RecoveryCookies: Sendable {
    let secure: Bool
    let lifetimeSeconds: Int

    init(_ configuration: Configuration) {
        secure = configuration.usesHTTPS
        lifetimeSeconds = configuration.recovery.sessionLifetimeSeconds
    }

    var name: String { secure ? "__Host-recovery" : "recovery" }

    func cookie(_ token: String) -> Cookie {
        Cookie(
            name: name, value: token, path: "/", maxAge: lifetimeSeconds, secure: secure, httpOnly: true,
            sameSite: .strict)
    }

    func expired() -> Cookie {
        Cookie.expired(name: name, path: "/", secure: secure, httpOnly: true, sameSite: .strict)
    }
}
