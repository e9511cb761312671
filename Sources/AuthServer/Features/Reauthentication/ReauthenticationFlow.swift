import Crypto
import Foundation
import HTTPServer
import WebAuthnCore

/// Proving again, in a signed-in session, that its user holds the account: the current
/// password or one of the account's passkeys. Success moves the session's `auth_time` to now
/// and adds the method to its `amr`, so that the credential changes that need a recent
/// sign-in (`reauthentication_required`) work again. Failures are `APIError`s.
struct ReauthenticationFlow {
    let services: AccountServices
    let store: any ReauthenticationStore

    /// A passkey ceremony begun: the challenge's id and the options for
    /// `navigator.credentials.get`, limited to the account's passkeys.
    struct PasskeyStart {
        var challengeID: UUID
        var options: PublicKeyCredentialRequestOptionsJSON
    }

    static let noPassword = APIError(
        status: .conflict, code: "no_password", message: "This account has no password. Use a passkey.")
    static let wrongAccount = APIError(
        status: .forbidden, code: "wrong_account",
        message: "This passkey belongs to another account. Use a passkey of this account.")

    /// Checks the account's current password; every wrong one counts against the account's and
    /// the client address's sign-in throttle, exactly as a failed sign-in does.
    func password(session: CurrentSession, password: String, request: HTTPRequest) throws {
        // 1. The account and its password.
        guard let account = try store.account(session.accountID) else { throw APIError.notSignedIn }
        let key = EmailAddress.normalize(account.email)
        let address = request.remoteAddress
        func failed(_ reason: String) {
            services.record(
                AuditEvent(
                    kind: .signInFailed, actor: .user, accountID: account.id, clientAddress: address,
                    detail: ["method": "password", "reason": reason, "step": "reauthentication"]))
        }
        guard let hash = try store.passwordHash(accountID: account.id) else { throw Self.noPassword }
        // 2. The throttle: counted before Argon2id runs, on the budget of a sign-in (see
        //    SignInThrottle).
        if let wait = try services.throttle.admit(accountKey: key, address: address) {
            services.log.warning(
                "reauthenticate.password",
                ["step": "throttle", "reason": "tooManyFailures", "address": address])
            failed("throttled")
            throw APIError.passwordThrottled(retryAfter: wait)
        }
        // 3. The password.
        let valid: Bool
        do {
            valid = try services.hasher.verify(password, against: hash).isValid
        } catch CryptoError.invalidPasswordHash {
            services.log.error(
                "reauthenticate.password", ["step": "verifyPassword", "reason": "storedHashUnreadable"])
            valid = false
        }
        guard valid else {
            services.log.warning(
                "reauthenticate.password", ["step": "verifyPassword", "reason": "wrongPassword"])
            failed("wrong_password")
            throw APIError.wrongPassword
        }
        try services.throttle.recordSuccess(accountKey: key, address: address, signedInAs: account.id)
        // 4. The session's new auth_time and amr, and its audit event.
        try recordReauthentication(
            session: session, amr: session.amr(adding: AuthenticationMethods.password), method: "password",
            request: request, in: store)
    }

    func passkeyStart(session: CurrentSession) throws -> PasskeyStart {
        let passkeys = try store.passkeys(accountID: session.accountID)
        let id = services.system.timeOrderedUUID()
        let challenge = services.system.randomBytes(32)
        try store.createChallenge(
            id: id, challenge: challenge, sessionID: session.id,
            lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds)
        var options = services.requestOptions(challenge: challenge)
        // Only this account's passkeys will do: the browser offers no other.
        options.allowCredentials = passkeys.map {
            PublicKeyCredentialDescriptorJSON(
                id: Base64URL.encode($0.credentialID), transports: $0.transports.isEmpty ? nil : $0.transports
            )
        }
        return PasskeyStart(challengeID: id, options: options)
    }

    /// Verifies an assertion for this session's challenge, made by a passkey of this session's
    /// account; the passkey's use and the session's new `auth_time` commit together.
    func passkeyFinish(
        session: CurrentSession, challengeID: UUID, credential: AuthenticationResponseJSON,
        request: HTTPRequest
    ) throws {
        // 1. Consume the challenge.
        guard let challenge = try store.consumeChallenge(id: challengeID, sessionID: session.id) else {
            services.log.warning(
                "failed", ["step": "reauthenticate.consumeChallenge", "reason": "challengeUnusable"])
            throw APIError.challengeInvalid
        }
        // 2. Find the passkey, and check it is this account's.
        guard let rawID = try? Base64URL.decode(credential.rawId), !rawID.isEmpty,
            let (record, userHandle) = try store.passkey(credentialID: rawID)
        else {
            services.log.warning(
                "failed", ["step": "reauthenticate.findCredential", "reason": "unknownCredential"])
            throw APIError.verificationFailed
        }
        guard record.accountID == session.accountID else {
            services.log.warning(
                "failed",
                [
                    "step": "reauthenticate.findCredential", "reason": "otherAccount",
                    "account": session.accountID.uuidString,
                ])
            throw Self.wrongAccount
        }
        // 3. Verify the assertion. The user is known before the ceremony (allowCredentials),
        //    so a passkey that returns no user handle (a non-discoverable one) is fine; one that
        //    does must match.
        let verified: VerifiedAuthentication
        do {
            verified = try services.authenticationVerifier.verify(
                credential, expectedChallenge: challenge, credential: record.stored(userHandle: userHandle),
                requireUserVerification: true, requireUserHandle: false)
        } catch {
            services.log.warning(
                "failed", ["step": "reauthenticate.verifyAssertion", "reason": webAuthnReason(error)])
            throw APIError.verificationFailed
        }
        // 4. The signature counter (passkeys.on_counter_regression).
        guard services.admitSignCount(verified, of: record, clientAddress: request.remoteAddress) else {
            throw APIError.verificationFailed
        }
        // 5. The passkey's use, the session's new auth_time and amr, and the audit event.
        let amr = session.amr(
            adding: AuthenticationMethods.passkey(
                backupEligible: record.backupEligible, userVerified: verified.userVerified))
        try store.transaction { store in
            try store.recordUse(
                passkeyID: record.id, signCount: verified.newSignCount, backedUp: verified.backedUp)
            try recordReauthentication(
                session: session, amr: amr, method: "passkey", request: request, in: store)
        }
    }

    // MARK: - Steps

    private func recordReauthentication(
        session: CurrentSession, amr: [String], method: String, request: HTTPRequest,
        in store: any ReauthenticationStore
    ) throws {
        guard try store.reauthenticate(session, amr: amr) else { throw APIError.notSignedIn }
        try store.record(
            AuditEvent(
                kind: .reauthenticated, actor: .user, accountID: session.accountID,
                clientAddress: request.remoteAddress, detail: ["method": method]))
        services.log.info("reauthenticated", ["account": session.accountID.uuidString, "method": method])
    }
}
