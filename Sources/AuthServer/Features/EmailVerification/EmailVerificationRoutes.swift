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

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        let services = services
        let verification = EmailVerification(services: services)

        api.add(.post, "/api/account/email/verify") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            let body = try JSONAPI.decode(VerifyRequest.self, request)
            let outcome = try services.guarded("email.verify") {
                try verification.verify(
                    .code(body.code, codeID: nil, accountID: session.accountID),
                    clientAddress: request.remoteAddress, language: EmailVerification.language(of: request))
            }
            switch outcome {
            case .verified:
                return try services.guarded("email.verify") {
                    try JSONAPI.json(VerifyResult(emailVerified: true))
                }
            case .invalid: throw APIError.invalidCode
            case .expired: throw APIError.codeExpired
            case .locked(let wait): throw APIError.verificationLocked(retryAfter: wait)
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
            var headers: [(String, String)] = []
            let proof: EmailVerification.Proof? =
                if let token = request.queryValue("token") {
                    .link(token: token)
                } else if let code = request.queryValue("code"),
                    let id = request.queryValue("id").flatMap({ UUID(uuidString: $0) })
                {
                    .code(code, codeID: id, accountID: nil)
                } else {
                    nil
                }
            if let proof {
                switch try verification.verify(
                    proof, clientAddress: request.remoteAddress,
                    language: EmailVerification.language(of: request))
                {
                case .verified:
                    (result, status) = (.verified, .ok)
                case .expired:
                    result = .expired
                case .locked(let wait):
                    (result, status) = (.locked, .tooManyRequests)
                    headers.append(("Retry-After", String(wait)))
                case .invalid:
                    // A link opened twice (or fetched first by a mail scanner) finds its code used
                    // but the address verified: say so rather than show an error.
                    if case .link(let token) = proof,
                        try EmailVerificationStore.isConsumedAndVerified(linkToken: token, on: services.pool)
                    {
                        (result, status) = (.verified, .ok)
                    }
                }
            }
            var response = PageRoutes.page(services, request, status: status) { context in
                LoginPages.emailVerificationResult(
                    EmailVerificationResultPage(context: context, result: result, signedIn: signedIn))
            }
            for (name, value) in headers { response.headers.set(name, value) }
            return response
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
    static func isConsumedAndVerified(linkToken: String, on db: some SQLExecutor) throws -> Bool {
        try !db.query(
            """
            SELECT 1 FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
            WHERE c.link_digest = \(VerificationCode.linkDigest(linkToken)) AND c.consumed_at IS NOT NULL
              AND e.verified_at IS NOT NULL
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
