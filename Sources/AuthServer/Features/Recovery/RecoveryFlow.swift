import Crypto
import Foundation
import LoginPages
import WebAuthnCore

/// Account recovery. See docs/api.md.
///
/// start → a code mailed to a verified address → verify → a recovery session (its own
/// cookie) that can do one thing: register a passkey or set a password. In the same
/// transaction every session of the account ends and every token of the account is revoked,
/// and a new session signs the user in; that session does not count as a recent sign-in for
/// further credential changes. `endOtherSessions` is "sign out everywhere else".
///
/// A code and its recovery session prove the mailbox the code went to, and only while that
/// address is a verified address of the account: the owner who moves the account to a new
/// address, or undoes someone's move to theirs, is not recovered out of it by the address it
/// left. Nor is a disabled account recovered. A completing recovery takes the account's lock
/// first, as those changes and `users disable` do.
///
/// Neither start nor verify tells whether an address has an account: start answers alike
/// whatever it finds, and verify answers `invalid_code` alike for unknown addresses and wrong
/// codes, after comparable work (a digest and a database round trip).
struct RecoveryFlow {
    let services: AccountServices
    let store: any RecoveryStore

    init(services: AccountServices, store: (any RecoveryStore)? = nil) {
        self.services = services
        self.store = store ?? PostgresRecoveryStore(db: services.pool, sessions: services.sessions)
    }

    private var settings: Configuration.RecoverySettings { services.configuration.recovery }
    private var system: TimeAndRandomness { services.system }

    /// What a completing request tells about its browser: the audit events record its address,
    /// the new session its user agent, and the notice mail goes out in its language.
    struct Requester: Sendable {
        var clientAddress: String
        var userAgent: String
        /// The browser's session cookie, if any: the new session replaces it.
        var sessionToken: String?
        var language: PageLanguage
    }

    /// A passkey registration offered to a recovery session: the creation options are built
    /// from these.
    struct PasskeyChallenge: Sendable {
        var account: AccountSummary
        var challengeID: UUID
        var challenge: [UInt8]
        /// The account's passkeys, excluded so an authenticator that holds one says so.
        var existing: [PasskeyRecord]
    }

    /// A completed recovery: the account, signed in with a new session.
    struct Recovered: Sendable {
        var accountID: UUID
        var sessionToken: String
        var session: CurrentSession
    }

    // MARK: - start

    /// Issues and mails a code when the address belongs to an account and is verified. The
    /// unknown-address path computes the same digest and makes one database round trip, and
    /// the mail leaves on another thread, so the answer's timing says little.
    func start(_ address: EmailAddress, language: PageLanguage, clientAddress: String) throws(APIError) {
        try services.guarded("recovery.start") {
            // 1. Throttle, per address as typed and per client, account or not.
            if let wait = try store.countRequest(
                .start, email: address.normalized, client: clientAddress, settings: settings)
            {
                services.log.warning(
                    "recovery.start",
                    ["step": "throttle", "reason": "tooManyRequests", "address": clientAddress])
                throw APIError.throttled(retryAfter: wait)
            }
            // 2. The code and its digest, computed on every path.
            let code = RecoveryCode.generate(system)
            let salt = RecoveryCode.newSalt(system)
            let digest = RecoveryCode.digest(code, salt: salt)
            // 3. The account: an unknown address makes the same round trip and stops.
            guard let target = try store.target(normalizedEmail: address.normalized) else {
                try store.probeCodes(normalizedEmail: address.normalized)
                services.log.info("recovery.start", ["step": "lookup", "reason": "noAccount"])
                return
            }
            // 4. No code, only the audit event, for an unverified address (it may not be its
            //    holder's) or a disabled account (its operator may have disabled it because
            //    someone else reads its mailbox).
            let refusal: (event: String, log: String)? =
                !target.verified
                ? ("email_unverified", "emailUnverified")
                : target.disabled ? ("account_disabled", "accountDisabled") : nil
            if let refusal {
                try store.record(
                    AuditEvent(
                        kind: .recoveryStarted, actor: .user, accountID: target.accountID,
                        clientAddress: clientAddress, detail: ["code_sent": "false", "reason": refusal.event]))
                services.log.info(
                    "recovery.start",
                    ["step": "lookup", "reason": refusal.log, "account": target.accountID.uuidString])
                return
            }
            // 5. The code replaces the earlier ones; audited with it.
            try store.transaction { store in
                try store.insertCode(
                    id: system.uuid(), accountID: target.accountID, normalizedEmail: address.normalized,
                    salt: salt, digest: digest, lifetimeSeconds: settings.codeLifetimeSeconds)
                try store.record(
                    AuditEvent(
                        kind: .recoveryStarted, actor: .user, accountID: target.accountID,
                        clientAddress: clientAddress, detail: ["code_sent": "true"]))
            }
            services.log.info(
                "recovery.start", ["step": "codeIssued", "account": target.accountID.uuidString])
            // 6. The mail, off the request's thread.
            let mail = RecoveryMail.code(
                to: target.email, code: code,
                link: RecoveryMail.link(
                    issuer: services.configuration.issuer, email: target.email, code: code),
                minutes: max(1, settings.codeLifetimeSeconds / 60),
                siteName: services.configuration.relyingPartyName, language: language)
            let mailer = services.mailer
            DispatchQueue.global().async { mailer.send(mail) }
        }
    }

    // MARK: - verify

    /// Checks a code and opens a recovery session; returns its cookie token.
    func verify(email: String, code typed: String, clientAddress: String) throws(APIError) -> String {
        let normalizedEmail = EmailAddress.normalize(email)
        return try services.guarded("recovery.verify") {
            // 1. Throttle: every check is a guess.
            if let wait = try store.countRequest(
                .verify, email: normalizedEmail, client: clientAddress, settings: settings)
            {
                services.log.warning(
                    "recovery.verify",
                    ["step": "throttle", "reason": "tooManyRequests", "address": clientAddress])
                throw APIError.throttled(retryAfter: wait)
            }
            // 2. Compare with each recent code in constant time (one digest when there is none).
            let code = RecoveryCode.normalize(typed) ?? ""
            let codes = try store.recentCodes(normalizedEmail: normalizedEmail)
            if codes.isEmpty {
                _ = RecoveryCode.digest(code, salt: RecoveryCode.newSalt(system))
            }
            var matched: RecoveryCodeRecord?
            for row in codes where constantTimeEquals(RecoveryCode.digest(code, salt: row.salt), row.digest) {
                matched = matched ?? row
            }
            // 3. Wrong: counts against the address's live code.
            guard let matched, !code.isEmpty else {
                try store.countWrongCode(normalizedEmail: normalizedEmail)
                services.log.warning("recovery.verify", ["step": "checkCode", "reason": "wrongCode"])
                throw APIError.recoveryCodeInvalid
            }
            // 4. Used, then expired.
            if matched.consumed {
                services.log.warning("recovery.verify", ["step": "checkCode", "reason": "codeUsed"])
                throw APIError.recoveryCodeInvalid
            }
            if matched.expired {
                services.log.warning("recovery.verify", ["step": "checkCode", "reason": "codeExpired"])
                throw APIError.recoveryCodeExpired
            }
            // 5. Use the code and open the session together.
            return try store.transaction { store in
                guard let accountID = try store.consumeCode(id: matched.id, maxAttempts: settings.maxAttempts)
                else {
                    services.log.warning(
                        "recovery.verify", ["step": "consumeCode", "reason": "codeUnusable"])
                    throw APIError.recoveryCodeInvalid
                }
                let token = Base64URL.encode(system.randomBytes(32))
                try store.createSession(
                    id: system.uuid(), accountID: accountID, normalizedEmail: normalizedEmail, token: token,
                    lifetimeSeconds: settings.sessionLifetimeSeconds)
                services.log.info(
                    "recovery.verify", ["step": "sessionOpened", "account": accountID.uuidString])
                return token
            }
        }
    }

    /// The live recovery session of a cookie token, else `recovery_required`.
    func session(token: String) throws(APIError) -> RecoverySession {
        let session = try services.guarded("recovery.session") { try store.liveSession(token: token) }
        guard let session else { throw APIError.recoveryRequired }
        return session
    }

    // MARK: - passkey

    /// A registration challenge for the recovery session's account.
    func passkeyStart(_ recovery: RecoverySession) throws(APIError) -> PasskeyChallenge {
        try services.guarded("recovery.passkey.start") {
            guard let account = try store.account(recovery.accountID) else { throw APIError.recoveryRequired }
            let id = system.timeOrderedUUID()
            let challenge = system.randomBytes(32)
            try store.createPasskeyChallenge(
                id: id, sessionID: recovery.id, challenge: challenge,
                lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds)
            return PasskeyChallenge(
                account: account, challengeID: id, challenge: challenge,
                existing: try store.passkeys(accountID: account.id))
        }
    }

    /// Registers the passkey and completes the recovery, in one transaction.
    func passkeyFinish(
        token: String, challengeID: UUID, credential: RegistrationResponseJSON, name: String?,
        _ requester: Requester
    ) throws(APIError) -> Recovered {
        try services.guarded("recovery.passkey.finish") {
            let recovered = try store.transaction { store in
                // 1. The recovery session, used up whatever follows commits.
                let recovery = try useSession(token: token, on: store)
                // 2. The challenge issued to that session.
                guard
                    let challenge = try store.consumePasskeyChallenge(id: challengeID, sessionID: recovery.id)
                else {
                    services.log.warning(
                        "failed", ["step": "recovery.consumeChallenge", "reason": "challengeUnusable"])
                    throw APIError.challengeInvalid
                }
                // 3. The credential: a recovery is the modal ceremony, user presence and
                //    verification required.
                let verified: VerifiedRegistration
                do {
                    verified = try services.registrationVerifier.verify(
                        credential, expectedChallenge: challenge, requireUserPresence: true,
                        requireUserVerification: true)
                } catch {
                    services.log.warning(
                        "failed", ["step": "recovery.verifyCredential", "reason": webAuthnReason(error)])
                    throw APIError.verificationFailed
                }
                // 4. The passkey.
                let name =
                    AccountServices.cleanName(name, maxLength: 100)
                    ?? AccountServices.defaultPasskeyName(verified)
                guard try store.addPasskey(verified, accountID: recovery.accountID, name: name) else {
                    throw APIError.credentialExists
                }
                // 5. Everyone signed out, the user signed in.
                return try complete(
                    recovery.accountID, method: .passkey, passkeyName: name, requester, on: store)
            }
            try notify(recovered, method: .passkey, language: requester.language)
            return recovered
        }
    }

    // MARK: - password

    /// Sets a new password and completes the recovery, in one transaction.
    func setPassword(_ newPassword: String, recovery: RecoverySession, token: String, _ requester: Requester)
        throws(APIError) -> Recovered
    {
        try services.guarded("recovery.password") {
            // 1. The account, and a password its policy accepts.
            guard let account = try store.account(recovery.accountID) else { throw APIError.recoveryRequired }
            if let problem = PasswordPolicy.check(newPassword, email: account.email) {
                throw APIError.weakPassword(problem)
            }
            // 2. The hash, outside the transaction.
            let hash = try services.hasher.hash(newPassword)
            let recovered = try store.transaction { store in
                // 3. The recovery session, used up, still for this account.
                guard try useSession(token: token, on: store).accountID == account.id else {
                    throw APIError.recoveryRequired
                }
                // 4. The password, which works at once even if guesses had locked the old one.
                try store.setPassword(accountID: account.id, hash: hash)
                try store.record(
                    AuditEvent(
                        kind: .passwordReset, actor: .user, accountID: account.id,
                        clientAddress: requester.clientAddress, detail: ["via": "recovery"]))
                // 5. Everyone signed out, the user signed in.
                return try complete(account.id, method: .password, passkeyName: nil, requester, on: store)
            }
            try notify(recovered, method: .password, language: requester.language)
            return recovered
        }
    }

    // MARK: - end other sessions

    /// "Sign out everywhere else": ends the account's other sessions; how many ended.
    func endOtherSessions(_ session: CurrentSession, clientAddress: String) throws(APIError) -> Int {
        try services.guarded("recovery.endOtherSessions") {
            let revoked = try store.transaction { store in
                let count = try store.endSessions(
                    accountID: session.accountID, keep: session.id, reason: .signedOutEverywhere)
                try store.record(
                    AuditEvent(
                        kind: .sessionsRevoked, actor: .user, accountID: session.accountID,
                        clientAddress: clientAddress, detail: ["scope": "others", "count": String(count)]))
                return count
            }
            services.log.info(
                "recovery.endOtherSessions",
                ["account": session.accountID.uuidString, "revoked": String(revoked)])
            return revoked
        }
    }

    // MARK: - Completion

    /// Inside the recovery's transaction: the account's lock, then the recovery session, used
    /// up. The lock comes first, as an email change, its undo, `users disable` and an account
    /// deletion take it: a change of address or a disable committing meanwhile is waited for
    /// and leaves the session unusable, and a deletion does not deadlock with a session row
    /// this transaction already holds.
    private func useSession(token: String, on store: any RecoveryStore) throws -> RecoverySession {
        guard let live = try store.liveSession(token: token) else { throw APIError.recoveryRequired }
        try store.lockAccount(live.accountID)
        guard let used = try store.completeSession(token: token), used.accountID == live.accountID else {
            services.log.warning("failed", ["step": "recovery.completeSession", "reason": "sessionUnusable"])
            throw APIError.recoveryRequired
        }
        return used
    }

    /// Inside the recovery's transaction: ends every session and revokes every token of the
    /// account, records the completion, then signs the user in with a new session.
    private func complete(
        _ accountID: UUID, method: RecoveryMail.Method, passkeyName: String?, _ requester: Requester,
        on store: any RecoveryStore
    ) throws -> Recovered {
        let ended = try store.endSessions(accountID: accountID, keep: nil, reason: .recovered)
        if let passkeyName {
            try store.record(
                AuditEvent(
                    kind: .passkeyAdded, actor: .user, accountID: accountID,
                    clientAddress: requester.clientAddress,
                    detail: ["ceremony": "recovery", "name": passkeyName]))
        }
        try store.record(
            AuditEvent(
                kind: .recoveryCompleted, actor: .user, accountID: accountID,
                clientAddress: requester.clientAddress,
                detail: ["method": method.rawValue, "sessions_revoked": String(ended)]))
        let (token, session) = try store.openSession(
            accountID: accountID, amr: AuthenticationMethods.emailRecovery, userAgent: requester.userAgent,
            clientAddress: requester.clientAddress, replacing: requester.sessionToken)
        return Recovered(accountID: accountID, sessionToken: token, session: session)
    }

    /// After the transaction: the notice to the account's address, which also reaches the
    /// owner when someone else recovered the account.
    private func notify(_ recovered: Recovered, method: RecoveryMail.Method, language: PageLanguage) throws {
        services.log.info(
            "recovery.completed", ["account": recovered.accountID.uuidString, "method": method.rawValue])
        if let account = try store.account(recovered.accountID) {
            services.mailer.send(
                RecoveryMail.recovered(
                    to: account.email, method: method, siteName: services.configuration.relyingPartyName,
                    language: language))
        }
    }
}

extension APIError {
    static let recoveryCodeInvalid = APIError(
        status: .badRequest, code: "invalid_code",
        message: "This code is not valid. Check it, or ask for a new one.")
    static let recoveryCodeExpired = APIError(
        status: .badRequest, code: "code_expired", message: "This code has expired. Ask for a new one.")
    static let recoveryRequired = APIError(
        status: .unauthorized, code: "recovery_required",
        message: "This recovery has expired or was already used. Start again.")
}
