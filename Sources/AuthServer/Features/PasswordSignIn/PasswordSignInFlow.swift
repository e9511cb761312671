import Crypto
import Foundation
import HTTPServer

/// Signing in with an email address and a password, for the JSON API and the `/signin` form.
///
/// Checks a password without revealing whether the account exists: an unknown address, an
/// account without a password and a wrong password all cost one Argon2id computation and
/// answer `.invalid`. The attempt is counted by the throttle before anything is checked, so
/// parallel guesses cannot outrun the limit. Imported scrypt/PBKDF2 hashes (or weaker Argon2
/// parameters) are replaced by a current Argon2id hash on success.
struct PasswordSignInFlow {
    let services: AccountServices
    let store: any PasswordSignInStore

    init(services: AccountServices, store: (any PasswordSignInStore)? = nil) {
        self.services = services
        self.store =
            store
            ?? PostgresPasswordSignInStore(
                db: services.pool, sessions: services.sessions, throttle: services.throttle)
    }

    enum Outcome {
        case signedIn(SignedIn)
        /// The password was right, but the passwordless policy wants this account's passkey.
        case passkeyRequired
        case invalid
        case throttled(retryAfter: Int)
    }

    struct SignedIn {
        var accountID: UUID
        var session: CurrentSession
        var cookie: Cookie
        /// `returnTo`, or the passkey prompt page in front of it.
        var destination: String
        var passkeyUpgrade: PasskeyUpgradeOffer?
    }

    /// Checks the password, then starts the session, counts the password sign-in for the
    /// passkey prompt and (with `offerUpgrade`, when the policy wants it and no prompt is due)
    /// offers a conditional passkey creation.
    func signIn(email: String, password: String, returnTo: String, offerUpgrade: Bool, request: HTTPRequest)
        throws(APIError) -> Outcome
    {
        let accountID: UUID
        let proof: String
        switch try checkPassword(email: email, password: password, clientAddress: request.remoteAddress) {
        case .right(let id, let hash): (accountID, proof) = (id, hash)
        case .passkeyRequired: return .passkeyRequired
        case .wrong: return .invalid
        case .throttled(let wait): return .throttled(retryAfter: wait)
        }
        return try services.guarded("signin.password.session") {
            // Session: added to the browser's other accounts; one of this account ends with it.
            guard
                let (token, session) = try store.startSession(
                    SessionStart(
                        adding: request, accountID: accountID, amr: AuthenticationMethods.password,
                        cookies: services.cookies),
                    provenBy: proof)
            else {
                // The password changed (or went) while it was being checked.
                services.log.warning("signin.password", ["step": "session", "reason": "passwordChanged"])
                return .invalid
            }
            // Passkey prompt: every n-th password sign-in of an account without a passkey.
            let policy = services.configuration.passwordless
            let prompt = try store.countPasswordSignIn(accountID: accountID, policy: policy)
            // Upgrade offer: a passkey created right now, without a modal dialog.
            let upgrade =
                offerUpgrade && policy.conditionalUpgrade && !prompt
                ? try upgradeOffer(accountID: accountID) : nil
            services.log.info("signin.password", ["step": "signedIn", "account": accountID.uuidString])
            return .signedIn(
                SignedIn(
                    accountID: accountID, session: session, cookie: services.cookies.session(token),
                    destination: PasswordlessPolicyEnforcement.destination(
                        prompt: prompt, returnTo: returnTo),
                    passkeyUpgrade: upgrade))
        }
    }

    private enum Check {
        /// The account, and its password hash the sign-in proved (rehashed, the new one).
        case right(UUID, hash: String)
        case passkeyRequired
        case wrong
        case throttled(Int)
    }

    private func checkPassword(email: String, password: String, clientAddress: String) throws(APIError)
        -> Check
    {
        let key = EmailAddress.normalize(email)
        func failed(_ reason: String, account: UUID?, result: String = "failure") {
            services.metrics.increment("auth_sign_ins_total", ["method": "password", "result": result])
            services.record(
                AuditEvent(
                    kind: .signInFailed, actor: .user, accountID: account, clientAddress: clientAddress,
                    detail: ["method": "password", "reason": reason]))
        }
        let log = services.log
        let hasher = services.hasher
        do {
            // Throttle: counted before anything is checked.
            if let wait = try store.admitCheck(accountKey: key, clientAddress: clientAddress) {
                log.warning(
                    "signin.password",
                    ["step": "throttle", "reason": "tooManyFailures", "address": clientAddress])
                failed("throttled", account: nil, result: "throttled")
                return .throttled(wait)
            }
            // Find: one account per address; none costs the same Argon2id computation.
            let stored = try store.passwordCredential(normalizedEmail: key)
            guard let stored, let hash = stored.passwordHash else {
                try hasher.verifyWithoutAccount(password)
                failed(stored == nil ? "unknown_account" : "no_password", account: stored?.accountID)
                return .wrong
            }
            // Verify.
            let verification: PasswordVerification
            do {
                verification = try hasher.verify(password, against: hash)
            } catch CryptoError.invalidPasswordHash {
                log.error("signin.password", ["step": "verifyPassword", "reason": "storedHashUnreadable"])
                failed("stored_hash_unreadable", account: stored.accountID)
                return .wrong
            }
            guard verification.isValid else {
                failed("wrong_password", account: stored.accountID)
                return .wrong
            }
            // Account state: a disabled account answers exactly as a wrong password does,
            // after the same work.
            guard !stored.disabled else {
                failed("account_disabled", account: stored.accountID)
                return .wrong
            }
            try store.recordRightPassword(accountKey: key, clientAddress: clientAddress, accountID: stored.accountID)
            // Policy: asked only after the password was found right.
            guard
                try store.passwordMaySignIn(
                    accountID: stored.accountID, policy: services.configuration.passwordless)
            else {
                log.info("signin.password", ["step": "policy", "reason": "passkeyRequired"])
                return .passkeyRequired
            }
            // Rehash: an older or weaker hash becomes a current Argon2id one, written only
            // over the hash just checked. When that one has gone meanwhile, the sign-in goes
            // on only with a hash the password verifies against (another sign-in's rehash),
            // never by writing back a password that was changed or removed.
            var proven = hash
            if verification.needsRehash {
                let rehashed = try hasher.hash(password)
                if try store.replacePasswordHash(accountID: stored.accountID, hash: rehashed, checked: hash) {
                    proven = rehashed
                    log.info("signin.password", ["step": "rehash", "account": stored.accountID.uuidString])
                } else {
                    guard let current = try store.passwordHash(accountID: stored.accountID),
                        try hasher.verify(password, against: current).isValid
                    else {
                        log.info("signin.password", ["step": "rehash", "reason": "passwordChanged"])
                        failed("password_changed", account: stored.accountID)
                        return .wrong
                    }
                    proven = current
                }
            }
            services.metrics.increment("auth_sign_ins_total", ["method": "password", "result": "success"])
            services.record(
                AuditEvent(
                    kind: .signInSucceeded, actor: .user, accountID: stored.accountID,
                    clientAddress: clientAddress, detail: ["method": "password"]))
            return .right(stored.accountID, hash: proven)
        } catch let error as APIError {
            throw error
        } catch CryptoError.overloaded {
            throw APIError.busy
        } catch {
            if let reason = unavailableDatabaseReason(of: error) {
                log.warning("signin.password", ["step": "database", "reason": reason])
                throw APIError.busy
            }
            log.error("signin.password", ["step": "database", "reason": String(describing: type(of: error))])
            throw APIError(
                status: .internalServerError, code: "server_error", message: "Something went wrong.")
        }
    }

    /// The conditional upgrade offered right after a password sign-in: a registration
    /// challenge bound to the account that just proved its password, marked conditional
    /// (so UP=0 is accepted for it alone), with a short lifetime.
    private func upgradeOffer(accountID: UUID) throws -> PasskeyUpgradeOffer? {
        guard let account = try store.account(accountID) else { return nil }
        let existing = try store.passkeys(of: accountID)
        let id = services.system.timeOrderedUUID()
        let challenge = services.system.randomBytes(32)
        try store.insertUpgradeChallenge(
            id: id, accountID: accountID, challenge: challenge,
            lifetimeSeconds: services.configuration.webAuthn.upgradeChallengeLifetimeSeconds)
        let options = services.creationOptions(
            challenge: challenge, userHandle: account.userHandle, name: account.email,
            displayName: account.displayName, exclude: existing, conditional: true)
        services.metrics.increment("auth_passkey_upgrades_total", ["result": "offered"])
        services.record(AuditEvent(kind: .passkeyUpgradeOffered, actor: .user, accountID: accountID))
        return PasskeyUpgradeOffer(challengeID: id.lowercased, options: options)
    }
}
