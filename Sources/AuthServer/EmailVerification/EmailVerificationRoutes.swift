import Foundation
import HTTPServer
import LoginPages

/// `POST /api/account/email/verify`, `POST /api/account/email/resend`, the link target
/// `GET /verify-email`, and the account page's form post `POST /account/email/resend`.
///
/// The link works for whoever holds it, signed in or not: it carries the secret (the code)
/// and the id of one code row, the message went only to the address being verified, and
/// the code row still counts wrong guesses and expires. Requiring a session would break the
/// common case of opening the message on another device.
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

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        let services = services
        let verification = EmailVerification(services: services)

        api.add(.post, "/api/account/email/verify") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            let body = try JSONAPI.decode(VerifyRequest.self, request)
            let outcome = try services.guarded("email.verify") {
                try verification.verify(
                    code: body.code, codeID: nil, accountID: session.accountID,
                    clientAddress: request.remoteAddress)
            }
            switch outcome {
            case .verified:
                return try services.guarded("email.verify") {
                    try JSONAPI.json(VerifyResult(emailVerified: true))
                }
            case .invalid: throw APIError.invalidCode
            case .expired: throw APIError.codeExpired
            }
        }

        api.add(.post, "/api/account/email/resend") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            let result = try services.guarded("email.resend") {
                try verification.sendCode(
                    accountID: session.accountID, language: EmailVerification.language(of: request),
                    throttled: true)
            }
            switch result {
            case .issued:
                return try services.guarded("email.resend") { try JSONAPI.json(ResendResult(sent: true)) }
            case .alreadyVerified: throw APIError.alreadyVerified
            case .throttled(let wait): throw APIError.resendThrottled(retryAfter: wait)
            case .noEmail: throw APIError.notFound
            }
        }

        router.get("/verify-email") { request, _ in
            let signedIn = (try? services.sessions.current(request)) != nil
            var result = EmailVerificationResultPage.Result.invalid
            var status = HTTPStatus.badRequest
            if let code = request.queryValue("code"), let idText = request.queryValue("id"),
                let id = UUID(uuidString: idText)
            {
                switch try verification.verify(
                    code: code, codeID: id, accountID: nil, clientAddress: request.remoteAddress)
                {
                case .verified:
                    (result, status) = (.verified, .ok)
                case .expired:
                    result = .expired
                case .invalid:
                    // A link opened twice (or fetched first by a mail scanner) finds its code used
                    // but the address verified: say so rather than show an error.
                    if try EmailVerificationStore.isConsumedAndVerified(codeID: id, on: services.pool) {
                        (result, status) = (.verified, .ok)
                    }
                }
            }
            return PageRoutes.page(services, request, status: status) { context in
                LoginPages.emailVerificationResult(
                    EmailVerificationResultPage(context: context, result: result, signedIn: signedIn))
            }
        }

        router.post("/account/email/resend") { request, _ in
            let form = PageRoutes.form(request)
            guard
                (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil,
                let session = try services.sessions.current(request)
            else {
                return PageRoutes.noStore(.redirect(to: "/account"))
            }
            let result = try verification.sendCode(
                accountID: session.accountID, language: EmailVerification.language(of: request),
                throttled: true)
            let notice =
                switch result {
                case .throttled: "too_soon"
                default: "sent"
                }
            return PageRoutes.noStore(.redirect(to: "/account?email=\(notice)"))
        }
    }
}

extension EmailVerificationStore {
    static func isConsumedAndVerified(codeID: UUID, on db: some SQLExecutor) throws -> Bool {
        try !db.query(
            """
            SELECT 1 FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
            WHERE c.id = \(codeID) AND c.consumed_at IS NOT NULL AND e.verified_at IS NOT NULL
            """
        ).isEmpty
    }

    /// The account page's prompt, or nil when the address is verified.
    static func prompt(accountID: UUID, notice: String?, on db: some SQLExecutor) throws
        -> EmailVerificationPrompt?
    {
        guard let email = try primaryEmail(accountID: accountID, on: db), email.verifiedAt == nil else {
            return nil
        }
        let codeID = try currentCodeID(accountEmailID: email.id, on: db)
        return EmailVerificationPrompt(
            codeID: codeID?.uuidString.lowercased(),
            notice: notice == "sent" ? .sent : notice == "too_soon" ? .tooSoon : nil)
    }
}
