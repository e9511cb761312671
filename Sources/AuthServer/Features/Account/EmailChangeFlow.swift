import Crypto
import Foundation
import HTTPServer
import LoginPages

/// Changing the account's address. The new address gets a code and a link (the code, salts,
/// digests, guess budget and resend interval of email verification); only once it comes back
/// does the new address replace the old one, verified. Until then the old address stays the
/// sign-in address. The old address is then told, with a link that undoes the change for
/// `email_verification.change_undo_days` days: it restores the old address and ends every
/// session and token, since whoever changed it may have taken over the account.
struct EmailChangeFlow {
    let services: AccountServices
    let store: any EmailChangeStore

    var settings: EmailVerificationSettings { services.configuration.emailVerification }
    var system: TimeAndRandomness { services.system }

    /// How a new address is confirmed.
    enum Proof {
        /// Typed on the account page by the signed-in account.
        case code(String, accountID: UUID)
        /// The token of the mailed link.
        case link(String)
    }

    /// What confirming came to; only `.changed` changed anything but counters.
    enum Outcome: Equatable {
        case changed(accountID: UUID)
        case invalid
        case expired
        case locked(retryAfter: Int)
        /// Another account has verified the new address meanwhile.
        case taken
    }

    static let sameEmail = APIError(
        status: .badRequest, code: "same_email", message: "This is already your email address.")
    static let emailTaken = APIError(
        status: .conflict, code: "email_taken", message: "This email address belongs to another account.")
    static let noPendingChange = APIError(
        status: .notFound, code: "no_pending_change", message: "There is no email change waiting for a code.")

    // MARK: - Asking

    /// Stores the change (replacing a pending one) and mails the code to the new address. At
    /// most one request per resend interval (`too_many_requests`). The route has required a
    /// recent sign-in.
    func request(session: CurrentSession, newEmail text: String, request: HTTPRequest) throws {
        // 1. The new address: well-formed, not the current one.
        guard let email = EmailAddress(text) else { throw APIError.invalidEmail }
        let code = VerificationCode.generate(system)
        let salt = VerificationCode.newSalt(system)
        let linkToken = VerificationCode.newLinkToken(system)
        // 2. Under the account's lock: the session still live (a password change or sign-out
        // everywhere that ended it meanwhile also ended pending changes), the resend interval,
        // then the pending change replaced.
        try store.transaction { store in
            try store.lockAccount(session.accountID)
            guard try store.holdSession(session) else { throw APIError.notSignedIn }
            guard let account = try store.account(session.accountID) else { throw APIError.notSignedIn }
            if EmailAddress.normalize(account.email) == email.normalized { throw Self.sameEmail }
            if let previous = try store.pending(accountID: account.id) {
                let age = Int(system.now().timeIntervalSince(previous.createdAt))
                if age < EmailVerificationFlow.resendIntervalSeconds {
                    throw APIError.resendThrottled(
                        retryAfter: EmailVerificationFlow.resendIntervalSeconds - age)
                }
            }
            try store.replacePending(
                id: system.uuid(), accountID: account.id, email: email, salt: salt,
                digest: VerificationCode.digest(salt: salt, code: code),
                linkDigest: VerificationCode.linkDigest(linkToken),
                lifetimeSeconds: settings.codeLifetimeSeconds)
            try store.record(
                AuditEvent(
                    kind: .emailChangeRequested, actor: .user, accountID: account.id,
                    clientAddress: request.remoteAddress))
        }
        // 3. After the commit: the code and link to the new address.
        let content = MailTemplates.emailChangeCode(
            code: code, link: services.configuration.issuer + "/account/email/confirm?token=" + linkToken,
            lifetimeMinutes: max(1, settings.codeLifetimeSeconds / 60),
            siteName: services.configuration.relyingPartyName,
            language: EmailVerificationFlow.language(of: request))
        services.mailer.send(content.mail(to: email.address))
        services.log.info("email.change", ["step": "codeSent", "account": session.accountID.uuidString])
    }

    /// The pending change's new address, for the account page; nil once it expired or was cancelled.
    func pendingAddress(accountID: UUID) throws -> String? {
        try store.transaction { store in try store.pending(accountID: accountID) }.flatMap {
            $0.expired ? nil : $0.newEmail
        }
    }

    /// Ends the pending change; `no_pending_change` when there was none. Its request time still
    /// paces the next request (cancelling and asking again would otherwise mail any address at
    /// will).
    func cancel(session: CurrentSession) throws {
        guard try store.cancelPending(accountID: session.accountID) else { throw Self.noPendingChange }
    }

    // MARK: - Confirming

    /// Checks the proof and, on success, replaces the address (verified), drops the pending
    /// change and, when the old address was verified, stores the undo link, all in one
    /// transaction; then tells the old address. A typed code spends the guess budget first.
    func confirm(_ proof: Proof, request: HTTPRequest) throws -> Outcome {
        let undoToken = VerificationCode.newLinkToken(system)
        var notice: (old: String, new: String)?
        let outcome = try store.transaction { store -> Outcome in
            // 1. The change aimed at, under its account's lock (taken first, as a request takes it).
            let accountID: UUID?
            let candidate: String?
            switch proof {
            case .code(let code, let id):
                accountID = id
                candidate = code
            case .link(let token):
                accountID = try store.pendingAccount(linkDigest: VerificationCode.linkDigest(token))
                candidate = nil
            }
            guard let accountID else { return .invalid }
            try store.lockAccount(accountID)
            guard let pending = try store.pending(accountID: accountID) else { return .invalid }
            if case .link(let token) = proof,
                !constantTimeEquals(try store.linkDigest(id: pending.id), VerificationCode.linkDigest(token))
            {
                return .invalid
            }
            // 2. A typed code spends the account's and the new address's guesses, right or wrong.
            if candidate != nil {
                let decision = try store.spendGuess(
                    accountID: pending.accountID, normalizedEmail: pending.newNormalizedEmail,
                    settings: settings)
                if case .locked(let retryAfter, _) = decision { return .locked(retryAfter: retryAfter) }
            }
            // 3. The code: alive, and right (a wrong guess counts against it).
            if pending.expired || pending.attempts >= settings.maxAttempts { return .expired }
            if let candidate, !VerificationCode.matches(candidate, salt: pending.salt, digest: pending.digest)
            {
                try store.countWrongGuess(id: pending.id)
                return .invalid
            }
            // 4. The new address is still free.
            if try store.verifiedElsewhere(
                normalizedEmail: pending.newNormalizedEmail, besides: pending.accountID)
            {
                return .taken
            }
            guard let old = try store.primaryAddress(accountID: pending.accountID) else { return .invalid }
            // 5. The replacement, verified; unverified holders of the new address lose it.
            let released = try store.replaceAddress(
                accountEmailID: old.id, accountID: pending.accountID, email: pending.newEmail,
                normalized: pending.newNormalizedEmail, verifiedAt: system.now())
            _ = try store.deletePending(accountID: pending.accountID)
            // 6. The undo link, for an old address that was proven to reach the holder.
            if old.verifiedAt != nil {
                try store.insertUndo(
                    id: system.uuid(), accountID: pending.accountID, accountEmailID: old.id,
                    old: (old.email, old.normalized, old.verifiedAt),
                    tokenDigest: VerificationCode.linkDigest(undoToken),
                    lifetimeSeconds: settings.changeUndoDays * 86_400)
                notice = (old.email, pending.newEmail)
            }
            try store.record(
                AuditEvent(
                    kind: .emailChanged, actor: .user, accountID: pending.accountID,
                    clientAddress: request.remoteAddress, detail: ["via": candidate == nil ? "link" : "code"])
            )
            // The losing account's event carries no address: the request was the winner's.
            for loser in released {
                try store.record(
                    AuditEvent(
                        kind: .emailAddressReleased, actor: .system, accountID: loser,
                        detail: ["verified_by": pending.accountID.lowercased]))
            }
            return .changed(accountID: pending.accountID)
        }
        // 7. After the commit: the old address is told, with the undo link.
        if let notice {
            let content = MailTemplates.emailChanged(
                newEmail: notice.new,
                undoURL: services.configuration.issuer + "/account/email/undo?token=" + undoToken,
                undoDays: settings.changeUndoDays, at: system.now(),
                siteName: services.configuration.relyingPartyName,
                language: EmailVerificationFlow.language(of: request))
            services.mailer.send(content.mail(to: notice.old))
        }
        services.log.info("email.change", ["step": "confirm", "outcome": "\(outcome)"])
        return outcome
    }

    // MARK: - Undoing

    /// Restores the old address (verified again unless another account verified it since),
    /// drops any pending change, and ends every session and token of the account, in one
    /// transaction. False when the token is unknown, used or expired.
    func undo(token: String, request: HTTPRequest) throws -> Bool {
        let done = try store.transaction { store -> Bool in
            guard let undo = try store.undo(tokenDigest: VerificationCode.linkDigest(token)) else {
                return false
            }
            try store.lockAccount(undo.accountID)
            let taken = try store.verifiedElsewhere(
                normalizedEmail: undo.oldNormalizedEmail, besides: undo.accountID)
            _ = try store.replaceAddress(
                accountEmailID: undo.accountEmailID, accountID: undo.accountID, email: undo.oldEmail,
                normalized: undo.oldNormalizedEmail, verifiedAt: taken ? nil : undo.oldVerifiedAt)
            _ = try store.deletePending(accountID: undo.accountID)
            try store.useUndos(from: undo)
            let ended = try store.signOutEverywhere(accountID: undo.accountID)
            try store.record(
                AuditEvent(
                    kind: .emailChangeUndone, actor: .user, accountID: undo.accountID,
                    clientAddress: request.remoteAddress, detail: ["sessions_revoked": String(ended)]))
            return true
        }
        services.log.info("email.change", ["step": "undo", "outcome": done ? "restored" : "invalidToken"])
        return done
    }
}
