import Crypto
import Foundation
import HTTPServer
import Postgres
import WebAuthnCore

extension AccountServices {
    // MARK: - Password sign-in

    enum PasswordSignInResult: Equatable {
        case signedIn(UUID)
        /// The password was right, but the passwordless policy wants this account's passkey.
        case passkeyRequired
        case invalid
        case throttled(retryAfter: Int)
    }

    /// Checks a password without revealing whether the account exists: an unknown address,
    /// an account without a password and a wrong password all cost one Argon2id computation
    /// and answer `.invalid`. The attempt is counted by the throttle before anything is
    /// checked, so parallel guesses cannot outrun the limit. Imported scrypt/PBKDF2 hashes (or
    /// weaker Argon2 parameters) are replaced by a current Argon2id hash on success.
    func passwordSignIn(email: String, password: String, clientAddress: String) throws(APIError)
        -> PasswordSignInResult
    {
        let key = EmailAddress.normalize(email)
        func failed(_ reason: String, account: UUID?, result: String = "failure") {
            metrics.increment("auth_sign_ins_total", ["method": "password", "result": result])
            record(
                AuditEvent(
                    kind: .signInFailed, actor: .user, accountID: account, clientAddress: clientAddress,
                    detail: ["method": "password", "reason": reason]))
        }
        do {
            if let wait = try throttle.admit(accountKey: key, address: clientAddress) {
                log.warning(
                    "signin.password",
                    ["step": "throttle", "reason": "tooManyFailures", "address": clientAddress])
                failed("throttled", account: nil, result: "throttled")
                return .throttled(retryAfter: wait)
            }
            let stored = try AccountStore.passwordCredential(normalizedEmail: key, on: pool)
            guard let stored, let hash = stored.passwordHash else {
                try hasher.verifyWithoutAccount(password)
                failed(stored == nil ? "unknown_account" : "no_password", account: stored?.accountID)
                return .invalid
            }
            let verification: PasswordVerification
            do {
                verification = try hasher.verify(password, against: hash)
            } catch CryptoError.invalidPasswordHash {
                log.error("signin.password", ["step": "verifyPassword", "reason": "storedHashUnreadable"])
                failed("stored_hash_unreadable", account: stored.accountID)
                return .invalid
            }
            guard verification.isValid else {
                failed("wrong_password", account: stored.accountID)
                return .invalid
            }
            // A disabled account answers exactly as a wrong password does, after the same work.
            guard !stored.disabled else {
                failed("account_disabled", account: stored.accountID)
                return .invalid
            }
            try throttle.recordSuccess(accountKey: key, address: clientAddress)
            guard
                try PasswordlessPolicyEnforcement.passwordMaySignIn(
                    configuration.passwordless, accountID: stored.accountID, on: pool)
            else {
                log.info("signin.password", ["step": "policy", "reason": "passkeyRequired"])
                return .passkeyRequired
            }
            if verification.needsRehash {
                try AccountStore.setPassword(
                    accountID: stored.accountID, hash: try hasher.hash(password), on: pool)
                log.info("signin.password", ["step": "rehash", "account": stored.accountID.uuidString])
            }
            metrics.increment("auth_sign_ins_total", ["method": "password", "result": "success"])
            record(
                AuditEvent(
                    kind: .signInSucceeded, actor: .user, accountID: stored.accountID,
                    clientAddress: clientAddress, detail: ["method": "password"]))
            return .signedIn(stored.accountID)
        } catch let error as APIError {
            throw error
        } catch CryptoError.overloaded {
            throw APIError.busy
        } catch let error as PostgresError where error.isUnavailable {
            log.warning("signin.password", ["step": "database", "reason": "\(error.kind)"])
            throw APIError.busy
        } catch {
            log.error("signin.password", ["step": "database", "reason": String(describing: type(of: error))])
            throw APIError(
                status: .internalServerError, code: "server_error", message: "Something went wrong.")
        }
    }
}
