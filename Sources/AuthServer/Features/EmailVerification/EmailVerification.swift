import Foundation
import HTTPServer
import LoginPages
import Postgres

/// Proving that an account's address reaches its holder: a six-digit code to type on the
/// account page and a link carrying a 128-bit token, sent at sign-up and on request. Guesses at
/// codes are limited per code and, across resends, per account and per address
/// (`VerificationGuessBudget`).
///
/// Several accounts may hold one address unverified; the first to verify it wins and the
/// others lose it. No code is mailed for an address another account has verified: at sign-up
/// its owner is told instead.
struct EmailVerification: Sendable {
    let services: AccountServices

    /// At most one new code per address in this many seconds.
    static let resendIntervalSeconds = 60

    /// How a verification is proven.
    enum Proof: Sendable {
        /// A code typed by the signed-in account (`codeID` nil) or sent with the account page's
        /// plain form (`codeID` set).
        case code(String, codeID: UUID?, accountID: UUID?)
        /// The token of the mailed link.
        case link(token: String)
    }

    var settings: EmailVerificationSettings { services.configuration.emailVerification }

    static func language(of request: HTTPRequest) -> PageLanguage {
        PageLanguage.negotiate(
            uiLocales: request.queryValue("ui_locales"), acceptLanguage: request.headers["Accept-Language"])
    }

    /// Issues a code and mails it. With `throttled`, refuses a second code within the resend
    /// interval. When another account has verified the address, nothing is mailed with the
    /// code; after a sign-up (`signUp`) the owner gets a notice instead. The answer is the same
    /// either way, so the caller learns nothing about the address.
    func sendCode(accountID: UUID, language: PageLanguage, throttled: Bool, signUp: Bool = false) throws
        -> EmailVerificationStore.IssueResult
    {
        let result = try services.pool.withTransaction { connection in
            try EmailVerificationStore.issue(
                accountID: accountID, lifetimeSeconds: settings.codeLifetimeSeconds,
                minimumInterval: throttled ? Self.resendIntervalSeconds : nil, on: connection)
        }
        guard case .issued(let id, let code, let token, let email, let heldBy) = result else { return result }
        let siteName = services.configuration.relyingPartyName
        if let heldBy {
            services.log.info(
                "email.verification",
                [
                    "step": "codeWithheld", "account": accountID.uuidString,
                    "reason": "addressVerifiedElsewhere",
                ])
            guard signUp else { return result }
            services.record(
                AuditEvent(kind: .signUpForVerifiedAddress, actor: .user, accountID: accountID))
            let issuer = services.configuration.issuer
            let content = MailTemplates.signUpAttempt(
                signInURL: issuer + "/signin", recoverURL: issuer + "/recover", siteName: siteName,
                language: language)
            services.mailer.send(content.mail(to: heldBy))
            return result
        }
        let content = MailTemplates.verification(
            code: code, link: link(token: token), lifetimeMinutes: max(1, settings.codeLifetimeSeconds / 60),
            siteName: siteName, language: language)
        services.mailer.send(content.mail(to: email.email))
        services.log.info(
            "email.verification",
            ["step": "codeSent", "account": accountID.uuidString, "code_id": id.uuidString])
        return result
    }

    /// `{issuer}/verify-email?token=…`
    func link(token: String) -> String {
        var components = URLComponents()
        components.queryItems = [URLQueryItem(name: "token", value: token)]
        return services.configuration.issuer + "/verify-email" + (components.string ?? "")
    }

    /// Sends the first code right after an account was created (its transaction committed). A
    /// failure here never fails the sign-up: the account page offers to send a new code.
    func sendAfterSignUp(accountID: UUID, request: HTTPRequest) {
        do {
            _ = try sendCode(
                accountID: accountID, language: Self.language(of: request), throttled: false, signUp: true)
        } catch {
            services.log.error(
                "email.verification",
                ["step": "sendAfterSignUp", "account": accountID.uuidString, "reason": "\(type(of: error))"])
        }
    }

    /// Checks a proof and, on success, verifies the address, removes it from the other accounts
    /// holding it unverified and records the events, all in one transaction. A code guess
    /// first spends the account's and the address's budget; a link's token cannot be guessed
    /// and spends none.
    func verify(_ proof: Proof, clientAddress: String, language: PageLanguage) throws
        -> EmailVerificationStore.Outcome
    {
        let candidate: String? =
            switch proof {
            case .code(let code, _, _): code
            case .link: nil
            }
        var lockedNotice: (email: String, retryAfter: Int)?
        let outcome = try services.pool.withTransaction { connection -> EmailVerificationStore.Outcome in
            let found: (codeID: UUID, accountID: UUID, normalizedEmail: String)?
            switch proof {
            case .code(_, let codeID, let accountID):
                found = try EmailVerificationStore.target(
                    codeID: codeID, accountID: accountID, on: connection)
            case .link(let token):
                found = try EmailVerificationStore.codeID(linkToken: token, on: connection).flatMap {
                    try EmailVerificationStore.target(codeID: $0, accountID: nil, on: connection)
                }
            }
            guard let target = found else { return .invalid }
            if candidate != nil {
                let decision = try VerificationGuessBudget.spend(
                    accountID: target.accountID, normalizedEmail: target.normalizedEmail, settings: settings,
                    on: connection)
                if case .locked(let retryAfter, let newlyLocked) = decision {
                    if newlyLocked {
                        try AuditLog.record(
                            AuditEvent(
                                kind: .emailVerificationLocked, actor: .user, accountID: target.accountID,
                                clientAddress: clientAddress, detail: ["retry_after": String(retryAfter)]),
                            on: connection)
                        let email = try EmailVerificationStore.primaryEmail(
                            accountID: target.accountID, on: connection)
                        lockedNotice = email.map { ($0.email, retryAfter) }
                    }
                    return .locked(retryAfter: retryAfter)
                }
            }
            let (outcome, released) = try EmailVerificationStore.attempt(
                candidate, codeID: target.codeID, normalizedEmail: target.normalizedEmail,
                maxAttempts: settings.maxAttempts, on: connection)
            if case .verified(let email) = outcome {
                try AuditLog.record(
                    AuditEvent(
                        kind: .emailVerified, actor: .user, accountID: email.accountID,
                        clientAddress: clientAddress, detail: ["via": candidate == nil ? "link" : "code"]),
                    on: connection)
                for loser in released {
                    try AuditLog.record(
                        AuditEvent(
                            kind: .emailAddressReleased, actor: .system, accountID: loser,
                            clientAddress: clientAddress,
                            detail: ["verified_by": email.accountID.uuidString.lowercased()]),
                        on: connection)
                }
            }
            return outcome
        }
        if let lockedNotice {
            let content = MailTemplates.verificationLocked(
                lockedMinutes: max(1, (lockedNotice.retryAfter + 59) / 60),
                accountURL: services.configuration.issuer + "/account",
                siteName: services.configuration.relyingPartyName, language: language)
            services.mailer.send(content.mail(to: lockedNotice.email))
        }
        switch outcome {
        case .verified(let email):
            services.log.info(
                "email.verification", ["step": "verified", "account": email.accountID.uuidString])
        case .invalid:
            services.log.warning("email.verification", ["step": "checkCode", "reason": "invalidCode"])
        case .expired:
            services.log.warning("email.verification", ["step": "checkCode", "reason": "codeExpired"])
        case .locked:
            services.log.warning("email.verification", ["step": "guessBudget", "reason": "locked"])
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
    static func verificationLocked(retryAfter: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "too_many_attempts",
            message: "Too many codes were tried. Wait before trying again, then ask for a new code.",
            headers: ["Retry-After": String(max(1, retryAfter))])
    }
}
