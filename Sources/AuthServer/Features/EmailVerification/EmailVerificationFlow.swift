import Foundation
import HTTPServer
import LoginPages

/// Proving that an account's address reaches its holder: a six-digit code to type on the
/// account page and a link carrying a 128-bit token, sent at sign-up and on request. Guesses at
/// codes are limited per code and, across resends, per account and per address
/// (`VerificationGuessBudget`).
///
/// Several accounts may hold one address unverified; the first to verify it wins and the
/// others lose it. No code is mailed for an address another account has verified: at sign-up
/// its owner is told instead.
struct EmailVerificationFlow {
    let services: AccountServices
    let store: any EmailVerificationStore

    init(services: AccountServices, store: (any EmailVerificationStore)? = nil) {
        self.services = services
        self.store = store ?? PostgresEmailVerificationStore(db: services.pool)
    }

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

    /// What a guess at a code came to.
    enum Outcome: Sendable, Equatable {
        case verified(AccountEmail)
        /// Wrong code, no code, or a code already used.
        case invalid
        /// Past its lifetime or out of attempts: a new code is needed.
        case expired
        /// The account or the address has spent its guesses for this window.
        case locked(retryAfter: Int)
    }

    /// What asking for a code came to.
    enum IssueResult: Sendable, Equatable {
        /// `heldBy` is the stored address of the account that verified this address, when
        /// another account did: then the code must not be mailed (it could never be used).
        case issued(id: UUID, code: String, linkToken: String, email: AccountEmail, heldBy: String?)
        case alreadyVerified
        case throttled(retryAfter: Int)
        case noEmail
    }

    private var settings: EmailVerificationSettings { services.configuration.emailVerification }
    private var system: TimeAndRandomness { services.system }

    static func language(of request: HTTPRequest) -> PageLanguage {
        PageLanguage.negotiate(
            uiLocales: request.queryValue("ui_locales"), acceptLanguage: request.headers["Accept-Language"])
    }

    // MARK: - Sending a code

    /// Issues a code and mails it. With `throttled`, refuses a second code within the resend
    /// interval. When another account has verified the address, nothing is mailed with the
    /// code; after a sign-up (`signUp`) the owner gets a notice instead. The answer is the same
    /// either way, so the caller learns nothing about the address.
    func sendCode(accountID: UUID, language: PageLanguage, throttled: Bool, signUp: Bool = false) throws
        -> IssueResult
    {
        // 1. A fresh code, replacing any unused one.
        let result = try issue(
            accountID: accountID, minimumInterval: throttled ? Self.resendIntervalSeconds : nil)
        guard case .issued(let id, let code, let token, let email, let heldBy) = result else { return result }
        let siteName = services.configuration.relyingPartyName
        // 2. Held by another account: no code; after a sign-up, a notice to the owner.
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
        // 3. The code and its link to the address.
        let content = MailTemplates.verification(
            code: code, link: link(token: token), lifetimeMinutes: max(1, settings.codeLifetimeSeconds / 60),
            siteName: siteName, language: language)
        services.mailer.send(content.mail(to: email.email))
        services.log.info(
            "email.verification",
            ["step": "codeSent", "account": accountID.uuidString, "code_id": id.uuidString])
        return result
    }

    /// Replaces the address's unused code with a new one, in one transaction that holds the
    /// address's row (so two requests cannot both pass the resend interval).
    private func issue(accountID: UUID, minimumInterval: Int?) throws -> IssueResult {
        try store.transaction { store in
            guard let email = try store.primaryEmail(accountID: accountID, lock: true) else {
                return .noEmail
            }
            if email.verifiedAt != nil { return .alreadyVerified }
            if let minimumInterval, let age = try store.lastCodeAge(accountEmailID: email.id),
                age < Double(minimumInterval)
            {
                return .throttled(retryAfter: max(1, minimumInterval - Int(age)))
            }
            let id = system.uuid()
            let code = VerificationCode.generate(system)
            let salt = VerificationCode.newSalt(system)
            let linkToken = VerificationCode.newLinkToken(system)
            try store.replaceCode(
                id: id, accountEmailID: email.id, salt: salt,
                digest: VerificationCode.digest(salt: salt, code: code),
                linkDigest: VerificationCode.linkDigest(linkToken),
                lifetimeSeconds: settings.codeLifetimeSeconds)
            let heldBy = try store.verifiedHolder(accountEmailID: email.id, besides: accountID)
            return .issued(id: id, code: code, linkToken: linkToken, email: email, heldBy: heldBy)
        }
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

    // MARK: - Verifying

    /// Checks a proof and, on success, verifies the address, removes it from the other accounts
    /// holding it unverified and records the events, all in one transaction. A code guess
    /// first spends the account's and the address's budget; a link's token cannot be guessed
    /// and spends none.
    func verify(_ proof: Proof, clientAddress: String, language: PageLanguage) throws -> Outcome {
        let candidate: String? =
            switch proof {
            case .code(let code, _, _): code
            case .link: nil
            }
        var lockedNotice: (email: String, retryAfter: Int)?
        let outcome = try store.transaction { store -> Outcome in
            // 1. The code aimed at.
            guard let target = try target(of: proof, in: store) else { return .invalid }
            // 2. A typed code spends the guess budget first, right or wrong.
            if candidate != nil {
                let decision = try store.spendGuess(
                    accountID: target.accountID, normalizedEmail: target.normalizedEmail, settings: settings)
                if case .locked(let retryAfter, let newlyLocked) = decision {
                    if newlyLocked {
                        try store.record(
                            AuditEvent(
                                kind: .emailVerificationLocked, actor: .user, accountID: target.accountID,
                                clientAddress: clientAddress, detail: ["retry_after": String(retryAfter)]))
                        let email = try store.primaryEmail(accountID: target.accountID, lock: false)
                        lockedNotice = email.map { ($0.email, retryAfter) }
                    }
                    return .locked(retryAfter: retryAfter)
                }
            }
            // 3. The code itself, and the address won.
            let (outcome, released) = try attempt(candidate, target: target, in: store)
            // 4. Audit: the verification and each account that lost the address.
            if case .verified(let email) = outcome {
                try store.record(
                    AuditEvent(
                        kind: .emailVerified, actor: .user, accountID: email.accountID,
                        clientAddress: clientAddress, detail: ["via": candidate == nil ? "link" : "code"]))
                // The losing account's event carries no address: the request was the winner's.
                for loser in released {
                    try store.record(
                        AuditEvent(
                            kind: .emailAddressReleased, actor: .system, accountID: loser,
                            detail: ["verified_by": email.accountID.lowercased]))
                }
            }
            return outcome
        }
        // 5. After the commit: the lock-out notice, once, and the log.
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

    /// The code a proof aims at: the form's row, the signed-in account's newest code, or the
    /// link's.
    private func target(of proof: Proof, in store: any EmailVerificationStore) throws -> VerificationTarget? {
        switch proof {
        case .code(_, let codeID?, _):
            return try store.target(codeID: codeID)
        case .code(_, nil, let accountID?):
            guard let email = try store.primaryEmail(accountID: accountID, lock: false) else { return nil }
            return try store.newestTarget(accountEmailID: email.id)
        case .code(_, nil, nil):
            return nil
        case .link(let token):
            return try store.codeID(linkDigest: VerificationCode.linkDigest(token)).flatMap {
                try store.target(codeID: $0)
            }
        }
    }

    /// Checks a guess at the target code, counting the attempt on the code; `candidate` nil
    /// means the link's token already matched. The address's holders are locked first, then
    /// the code.
    private func attempt(
        _ candidate: String?, target: VerificationTarget, in store: any EmailVerificationStore
    )
        throws -> (outcome: Outcome, released: [UUID])
    {
        try store.lockHolders(normalizedEmail: target.normalizedEmail)
        // 1. Find; a used code is invalid, an old or exhausted one expired.
        guard let code = try store.lockedCode(id: target.codeID) else { return (.invalid, []) }
        if code.consumed { return (.invalid, []) }
        if code.expired || code.attempts >= settings.maxAttempts { return (.expired, []) }
        // 2. Compare; a wrong guess counts against the code.
        if let candidate, !VerificationCode.matches(candidate, salt: code.salt, digest: code.digest) {
            try store.countWrongGuess(codeID: code.id)
            return (.invalid, [])
        }
        // 3. Another account verified the address first: this code can never win it.
        if try store.verifiedElsewhere(normalizedEmail: target.normalizedEmail, besides: code.email.accountID)
        {
            return (.invalid, [])
        }
        // 4. Use the code, verify the address; the other holders lose it (their codes go with it).
        try store.consumeCode(id: code.id)
        var email = code.email
        email.verifiedAt = try store.markVerified(accountEmailID: email.id) ?? system.now()
        let released = try store.release(normalizedEmail: target.normalizedEmail, keeping: email.id)
        return (.verified(email), released)
    }

    /// Whether a link that no longer verifies was used and its address verified: a link opened
    /// twice (or fetched first by a mail scanner).
    func linkAlreadyVerified(token: String) throws -> Bool {
        try store.isConsumedAndVerified(linkDigest: VerificationCode.linkDigest(token))
    }

    /// The account page's prompt, or nil when the address is verified.
    func prompt(accountID: UUID, notice: String?) throws -> EmailVerificationPrompt? {
        guard let email = try store.primaryEmail(accountID: accountID, lock: false), email.verifiedAt == nil
        else {
            return nil
        }
        let codeID = try store.currentCodeID(accountEmailID: email.id)
        return EmailVerificationPrompt(
            codeID: codeID?.lowercased,
            notice: notice == "sent" ? .sent : notice == "too_soon" ? .tooSoon : nil)
    }

    /// The address mail about the account goes to.
    func primaryEmail(accountID: UUID) throws -> AccountEmail? {
        try store.primaryEmail(accountID: accountID, lock: false)
    }
}

extension AccountServices {
    var emailVerification: EmailVerificationFlow { EmailVerificationFlow(services: self) }
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
