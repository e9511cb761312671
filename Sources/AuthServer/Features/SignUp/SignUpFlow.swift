import Crypto
import Foundation
import HTTPServer
import WebAuthnCore

/// Creating an account, with a password (JSON and the `/signup` form) or with a passkey
/// (JSON), and signing it in.
///
/// An address another account holds answers exactly as a new one: the new account holds it
/// unverified, and `sendAfterSignUp` mails a verified owner a notice instead of a code.
struct SignUpFlow {
    let services: AccountServices
    let store: any SignUpStore

    init(services: AccountServices, store: (any SignUpStore)? = nil) {
        self.services = services
        self.store = store ?? PostgresSignUpStore(db: services.pool, sessions: services.sessions)
    }

    struct SignedUp {
        var accountID: UUID
        var session: CurrentSession
        var cookie: Cookie
    }

    struct PasskeyStarted {
        var registrationID: UUID
        var options: PublicKeyCredentialCreationOptionsJSON
    }

    /// Creates a password account, sends its first verification code and signs it in.
    func password(email: String, displayName: String, password: String, request: HTTPRequest) throws(APIError)
        -> SignedUp
    {
        let clientAddress = request.remoteAddress
        // Policy, then the entries: address, name, password strength.
        guard services.configuration.passwordless.passwordSignUp else {
            throw PasswordlessPolicyEnforcement.passwordSignUpDisabled
        }
        guard let address = EmailAddress(email) else { throw APIError.invalidEmail }
        guard let name = AccountStore.validDisplayName(displayName) else { throw APIError.invalidDisplayName }
        if let problem = PasswordPolicy.check(password, email: address.normalized) {
            throw APIError.weakPassword(problem)
        }
        // Throttle: every attempt counts.
        try countSignUp(address, clientAddress: clientAddress)
        // Account, password and audit event commit together.
        let accountID = try services.guarded("signup.password") {
            let hash = try services.hasher.hash(password)
            let id = services.system.uuid()
            try store.transaction { store in
                try store.insertAccount(
                    id: id, displayName: name, email: address, userHandle: services.system.randomBytes(32))
                try store.setPassword(accountID: id, hash: hash)
                try store.record(
                    AuditEvent(
                        kind: .accountCreated, actor: .user, accountID: id, clientAddress: clientAddress,
                        detail: ["method": "password"]))
            }
            services.log.info("signup.password", ["step": "created", "account": id.uuidString])
            return id
        }
        services.emailVerification.sendAfterSignUp(accountID: accountID, request: request)
        // Session.
        return try services.guarded("signup.password.session") {
            let (token, session) = try store.startSession(
                SessionStart(
                    request, accountID: accountID, amr: AuthenticationMethods.password,
                    cookies: services.cookies))
            return SignedUp(accountID: accountID, session: session, cookie: services.cookies.session(token))
        }
    }

    /// Reserves an account id and a user handle and returns the creation options; the
    /// account is written only by `finishPasskey`.
    func startPasskey(email: String?, displayName: String?) throws(APIError) -> PasskeyStarted {
        try services.guarded("signup.passkey.start") {
            let registration = PasskeyStore.AccountRegistration(
                id: services.system.uuid(), prospectiveAccountID: services.system.uuid(),
                userHandle: services.system.randomBytes(32), challenge: services.system.randomBytes(32))
            try store.insertRegistration(
                registration, lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds)
            let email = email.flatMap(EmailAddress.init)?.address ?? ""
            let name = displayName.flatMap(AccountStore.validDisplayName) ?? email
            return PasskeyStarted(
                registrationID: registration.id,
                options: services.creationOptions(
                    challenge: registration.challenge, userHandle: registration.userHandle, name: email,
                    displayName: name, exclude: [], conditional: false))
        }
    }

    /// Verifies the new passkey and writes the account, its passkey, their audit events and
    /// the session in one transaction; then sends the first verification code.
    func finishPasskey(
        registrationID: UUID, email: String, displayName: String, credential: RegistrationResponseJSON,
        request: HTTPRequest
    ) throws(APIError) -> SignedUp {
        let clientAddress = request.remoteAddress
        // Entries: address and name.
        guard let email = EmailAddress(email) else { throw APIError.invalidEmail }
        guard let displayName = AccountStore.validDisplayName(displayName) else {
            throw APIError.invalidDisplayName
        }
        // Throttle: every attempt counts.
        try countSignUp(email, clientAddress: clientAddress)
        let services = services
        let (accountID, token, session) = try services.guarded("signup.passkey.finish") {
            try store.transaction { store in
                // Registration: completed once, before its expiry.
                guard let registration = try store.completeRegistration(id: registrationID) else {
                    services.log.warning(
                        "failed", ["step": "signup.completeRegistration", "reason": "registrationUnusable"])
                    throw APIError.challengeInvalid
                }
                // Credential: attestation, origin, RP id, flags (user presence and verification).
                let verified: VerifiedRegistration
                do {
                    verified = try services.registrationVerifier.verify(
                        credential, expectedChallenge: registration.challenge, requireUserPresence: true,
                        requireUserVerification: true)
                } catch {
                    services.log.warning(
                        "failed", ["step": "signup.verifyCredential", "reason": webAuthnReason(error)])
                    throw APIError.verificationFailed
                }
                // Account: an address held by another account answers as a new one (no
                // enumeration): this account holds it unverified, and `sendAfterSignUp` tells
                // the owner.
                let accountID = registration.prospectiveAccountID
                try store.insertAccount(
                    id: accountID, displayName: displayName, email: email, userHandle: registration.userHandle
                )
                // Passkey.
                let passkeyName = AccountServices.defaultPasskeyName(verified)
                do {
                    try store.insertPasskey(verified, accountID: accountID, name: passkeyName)
                } catch PasskeyStore.InsertError.credentialExists {
                    throw APIError.credentialExists
                }
                // Audit events.
                try store.record(
                    AuditEvent(
                        kind: .accountCreated, actor: .user, accountID: accountID,
                        clientAddress: clientAddress,
                        detail: ["method": "passkey"]))
                try store.record(
                    AuditEvent(
                        kind: .passkeyAdded, actor: .user, accountID: accountID, clientAddress: clientAddress,
                        detail: ["ceremony": "sign_up", "name": passkeyName]))
                // Session.
                let amr = AuthenticationMethods.passkey(
                    backupEligible: verified.backupEligible, userVerified: verified.userVerified)
                let (token, session) = try store.startSession(
                    SessionStart(request, accountID: accountID, amr: amr, cookies: services.cookies))
                return (accountID, token, session)
            }
        }
        services.log.info("signup.passkey", ["step": "created", "account": accountID.uuidString])
        services.emailVerification.sendAfterSignUp(accountID: accountID, request: request)
        return SignedUp(accountID: accountID, session: session, cookie: services.cookies.session(token))
    }

    /// Counts a sign-up attempt; `signUpThrottled` (429) past the limits.
    private func countSignUp(_ email: EmailAddress, clientAddress: String) throws(APIError) {
        let settings = services.configuration.signUp
        let wait = try services.guarded("signup.throttle") {
            SignUpThrottle.wait(
                try store.countSignUp(
                    normalizedEmail: email.normalized, client: clientAddress,
                    windowSeconds: settings.windowSeconds),
                settings: settings)
        }
        if let wait {
            services.log.warning(
                "signup", ["step": "throttle", "reason": "tooManySignUps", "address": clientAddress])
            throw APIError.signUpThrottled(retryAfter: wait)
        }
    }
}
