import Foundation
import HTTPServer
import LoginPages

/// `POST /api/account/email/verify`, `POST /api/account/email/resend`, the link target
/// `GET /verify-email`, and the account page's form post `POST /account/email/resend`.
///
/// The link works for whoever holds it, signed in or not: it carries a 128-bit token that
/// went only to the address being verified, and its code row still expires. Requiring a
/// session would break the common case of opening the message on another device. The account
/// page's plain form sends the code with its row id to the same path; such a guess spends the
/// account's and the address's guess budget like one sent to the JSON API.
struct EmailVerificationRoutes: Sendable {
    let services: AccountServices

    struct VerifyRequest: Decodable {
        var code: String
    }

    struct VerifyResult: Encodable {
        var emailVerified: Bool

        enum CodingKeys: String, CodingKey { case emailVerified = "email_verified" }
    }

    struct ResendResult: Encodable {
        var sent: Bool
    }

    private var flow: EmailVerificationFlow { EmailVerificationFlow(services: services) }

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        let routes = self
        api.add(.post, "/api/account/email/verify") { request, _ throws(APIError) in
            try routes.verify(request)
        }
        api.add(.post, "/api/account/email/resend") { request, _ throws(APIError) in
            try routes.resend(request)
        }
        router.get("/verify-email") { request, _ in try routes.verifyPage(request) }
        router.post("/account/email/resend") { request, _ in try routes.resendForm(request) }
    }

    /// `POST /api/account/email/verify`: a code typed by the signed-in account.
    func verify(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let session = try services.requireSession(request)
        let body = try JSONAPI.decode(VerifyRequest.self, request)
        let outcome = try services.guarded("email.verify") {
            try flow.verify(
                .code(body.code, codeID: nil, accountID: session.accountID),
                clientAddress: request.remoteAddress,
                language: EmailVerificationFlow.language(of: request))
        }
        switch outcome {
        case .verified: return try JSONAPI.json(VerifyResult(emailVerified: true))
        case .invalid: throw APIError.invalidCode
        case .expired: throw APIError.codeExpired
        case .locked(let wait): throw APIError.verificationLocked(retryAfter: wait)
        }
    }

    /// `POST /api/account/email/resend`: a new code, at most one a minute.
    func resend(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let session = try services.requireSession(request)
        let result = try services.guarded("email.resend") {
            try flow.sendCode(
                accountID: session.accountID, language: EmailVerificationFlow.language(of: request),
                throttled: true)
        }
        switch result {
        case .issued: return try JSONAPI.json(ResendResult(sent: true))
        case .alreadyVerified: throw APIError.alreadyVerified
        case .throttled(let wait): throw APIError.resendThrottled(retryAfter: wait)
        case .noEmail: throw APIError.notFound
        }
    }

    /// `GET /verify-email?token=…` (the mailed link) or `?code=…&id=…` (the account page's
    /// plain form): a result page.
    func verifyPage(_ request: HTTPRequest) throws -> HTTPResponse {
        let signedIn = (try? services.sessions.current(request)) != nil
        var (result, retryAfter) = (EmailVerificationResultPage.Result.invalid, Int?.none)
        if let proof = Self.proof(request) {
            switch try flow.verify(
                proof, clientAddress: request.remoteAddress,
                language: EmailVerificationFlow.language(of: request))
            {
            case .verified: result = .verified
            case .expired: result = .expired
            case .locked(let wait): (result, retryAfter) = (.locked, wait)
            case .invalid:
                // A link opened twice (or fetched first by a mail scanner) finds its code used
                // but the address verified: say so rather than show an error.
                if case .link(let token) = proof, try flow.linkAlreadyVerified(token: token) {
                    result = .verified
                }
            }
        }
        var response = Pages.page(services, request, status: Self.status(result)) { context in
            LoginPages.emailVerificationResult(
                EmailVerificationResultPage(context: context, result: result, signedIn: signedIn))
        }
        if let retryAfter { response.headers.set("Retry-After", String(retryAfter)) }
        return response
    }

    static func status(_ result: EmailVerificationResultPage.Result) -> HTTPStatus {
        switch result {
        case .verified: .ok
        case .locked: .tooManyRequests
        case .invalid, .expired: .badRequest
        }
    }

    /// The link's token, else the form's code with its row id.
    static func proof(_ request: HTTPRequest) -> EmailVerificationFlow.Proof? {
        if let token = request.queryValue("token") { return .link(token: token) }
        guard let code = request.queryValue("code"),
            let id = request.queryValue("id").flatMap(UUID.init(uuidString:))
        else { return nil }
        return .code(code, codeID: id, accountID: nil)
    }

    /// `POST /account/email/resend`: the account page's form, back to the page with a notice.
    func resendForm(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = Pages.form(request)
        guard
            (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil,
            let session = try services.sessions.current(request)
        else {
            return Pages.noStore(.redirect(to: "/account"))
        }
        let result = try flow.sendCode(
            accountID: session.accountID, language: EmailVerificationFlow.language(of: request),
            throttled: true)
        let notice =
            switch result {
            case .throttled: "too_soon"
            default: "sent"
            }
        return Pages.noStore(.redirect(to: "/account?email=\(notice)"))
    }
}
