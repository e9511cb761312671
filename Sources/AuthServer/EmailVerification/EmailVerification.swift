import Foundation
import HTTPServer
import LoginPages
import Postgres

/// Proving that an account's address reaches its holder: a six-digit code (and a link carrying
/// it) sent at sign-up and on request, checked with a limited number of attempts.
struct EmailVerification: Sendable {
    let services: AccountServices

    /// At most one new code per address in this many seconds.
    static let resendIntervalSeconds = 60

    var settings: EmailVerificationSettings { services.configuration.emailVerification }

    static func language(of request: HTTPRequest) -> PageLanguage {
        PageLanguage.negotiate(
            uiLocales: request.queryValue("ui_locales"), acceptLanguage: request.headers["Accept-Language"])
    }

    /// Issues a code and mails it. With `throttled`, refuses a second code within the resend
    /// interval.
    func sendCode(accountID: UUID, language: PageLanguage, throttled: Bool) throws
        -> EmailVerificationStore.IssueResult
    {
        let result = try services.pool.withTransaction { connection in
            try EmailVerificationStore.issue(
                accountID: accountID, lifetimeSeconds: settings.codeLifetimeSeconds,
                minimumInterval: throttled ? Self.resendIntervalSeconds : nil, on: connection)
        }
        if case .issued(let id, let code, let email) = result {
            let content = MailTemplates.verification(
                code: code, link: link(id: id, code: code),
                lifetimeMinutes: max(1, settings.codeLifetimeSeconds / 60),
                siteName: services.configuration.relyingPartyName, language: language)
            services.mailer.send(content.mail(to: email.email))
            services.log.info(
                "email.verification",
                ["step": "codeSent", "account": accountID.uuidString, "code_id": id.uuidString])
        }
        return result
    }

    /// `{issuer}/verify-email?code=…&id=…`
    func link(id: UUID, code: String) -> String {
        var components = URLComponents()
        components.queryItems = [
            URLQueryItem(name: "code", value: code),
            URLQueryItem(name: "id", value: id.uuidString.lowercased()),
        ]
        return services.configuration.issuer + "/verify-email" + (components.string ?? "")
    }

    /// Sends the first code right after an account was created (its transaction committed). A
    /// failure here never fails the sign-up: the account page offers to send a new code.
    func sendAfterSignUp(accountID: UUID, request: HTTPRequest) {
        do {
            _ = try sendCode(accountID: accountID, language: Self.language(of: request), throttled: false)
        } catch {
            services.log.error(
                "email.verification",
                ["step": "sendAfterSignUp", "account": accountID.uuidString, "reason": "\(type(of: error))"])
        }
    }

    /// Checks a code, by link (`codeID`) or for the signed-in account, and records
    /// `email.verified` in the same transaction as the change.
    func verify(code: String, codeID: UUID?, accountID: UUID?, clientAddress: String) throws
        -> EmailVerificationStore.Outcome
    {
        let outcome = try services.pool.withTransaction { connection in
            let outcome = try EmailVerificationStore.attempt(
                code, codeID: codeID, accountID: accountID, maxAttempts: settings.maxAttempts, on: connection)
            if case .verified(let email) = outcome {
                try AuditLog.record(
                    AuditEvent(
                        kind: .emailVerified, actor: .user, accountID: email.accountID,
                        clientAddress: clientAddress, detail: ["via": codeID == nil ? "code" : "link"]),
                    on: connection)
            }
            return outcome
        }
        switch outcome {
        case .verified(let email):
            services.log.info(
                "email.verification", ["step": "verified", "account": email.accountID.uuidString])
        case .invalid:
            services.log.warning("email.verification", ["step": "checkCode", "reason": "invalidCode"])
        case .expired:
            services.log.warning("email.verification", ["step": "checkCode", "reason": "codeExpired"])
        }
        return outcome
    }
}

extension APIError {
    static let invalidCode = APIError(
        status: .badRequest, code: "invalid_code",
        message: "This code is not correct. Check the message and try again.")
    static let codeExpired = APIError(
        status: .badRequest, code: "code_expired",
        message: "This code can no longer be used. Ask for a new one.")
    static let alreadyVerified = APIError(
        status: .conflict, code: "already_verified", message: "Your email address is already verified.")
    static func resendThrottled(retryAfter: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "too_many_requests",
            message: "A code was sent a moment ago. Wait a minute before asking for another.",
            headers: ["Retry-After": String(max(1, retryAfter))])
    }
}
