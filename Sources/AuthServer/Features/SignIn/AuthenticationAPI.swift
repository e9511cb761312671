import Crypto
import Foundation
import HTTPServer
import Postgres
import WebAuthnCore

/// Signing in and out, and creating accounts, as JSON (what the pages' scripts and native
/// apps call). See docs/api.md.
struct AuthenticationAPI: Sendable {
    let services: AccountServices

    struct PasswordSignInRequest: Decodable {
        var email: String
        var password: String
        var returnTo: String?

        enum CodingKeys: String, CodingKey {
            case email
            case password
            case returnTo = "return_to"
        }
    }

    struct PasskeyUpgrade: Encodable {
        var challengeID: String
        var options: PublicKeyCredentialCreationOptionsJSON

        enum CodingKeys: String, CodingKey {
            case challengeID = "challenge_id"
            case options
        }
    }

    struct SignedIn: Encodable {
        var accountID: String
        var sessionID: String
        var redirectTo: String
        var passkeyUpgrade: PasskeyUpgrade?

        enum CodingKeys: String, CodingKey {
            case accountID = "account_id"
            case sessionID = "session_id"
            case redirectTo = "redirect_to"
            case passkeyUpgrade = "passkey_upgrade"
        }
    }

    struct PasswordSignUpRequest: Decodable {
        var email: String
        var displayName: String
        var password: String
        var returnTo: String?

        enum CodingKeys: String, CodingKey {
            case email
            case displayName = "display_name"
            case password
            case returnTo = "return_to"
        }
    }

    struct ChallengeResponse<Options: Encodable>: Encodable {
        var challengeID: String
        var options: Options

        enum CodingKeys: String, CodingKey {
            case challengeID = "challenge_id"
            case options
        }
    }

    struct PasskeyFinishRequest: Decodable {
        var challengeID: String
        var credential: AuthenticationResponseJSON
        var returnTo: String?

        enum CodingKeys: String, CodingKey {
            case challengeID = "challenge_id"
            case credential
            case returnTo = "return_to"
        }
    }

    struct PasskeySignUpStartRequest: Decodable {
        var email: String?
        var displayName: String?

        enum CodingKeys: String, CodingKey {
            case email
            case displayName = "display_name"
        }
    }

    struct PasskeySignUpStart: Encodable {
        var registrationID: String
        var options: PublicKeyCredentialCreationOptionsJSON

        enum CodingKeys: String, CodingKey {
            case registrationID = "registration_id"
            case options
        }
    }

    struct PasskeySignUpFinishRequest: Decodable {
        var registrationID: String
        var email: String
        var displayName: String
        var credential: RegistrationResponseJSON
        var returnTo: String?

        enum CodingKeys: String, CodingKey {
            case registrationID = "registration_id"
            case email
            case displayName = "display_name"
            case credential
            case returnTo = "return_to"
        }
    }

    struct CSRFToken: Encodable {
        var csrfToken: String

        enum CodingKeys: String, CodingKey {
            case csrfToken = "csrf_token"
        }
    }

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        let services = services

        router.get("/api/csrf") { request, _ in
            let (token, cookie) = services.csrf.token(for: request)
            var response = try JSONAPI.json(CSRFToken(csrfToken: token))
            if let cookie { response.setCookie(cookie) }
            response.headers.set("Cache-Control", "no-store")
            return response
        }

        api.add(.post, "/api/signin/password") { request, _ throws(APIError) in
            let body = try JSONAPI.decode(PasswordSignInRequest.self, request)
            switch try services.passwordSignIn(
                email: body.email, password: body.password, clientAddress: request.remoteAddress)
            {
            case .throttled(let wait): throw APIError.passwordThrottled(retryAfter: wait)
            case .invalid: throw APIError.invalidCredentials
            case .passkeyRequired: throw PasswordlessPolicyEnforcement.passkeyRequired
            case .signedIn(let accountID):
                return try services.guarded("signin.password.session") {
                    let (cookie, session) = try services.startSession(
                        accountID: accountID, amr: AuthenticationMethods.password, request: request)
                    let policy = services.configuration.passwordless
                    let prompt = try PasswordlessPolicyEnforcement.countPasswordSignIn(
                        policy, accountID: accountID, on: services.pool)
                    let upgrade =
                        policy.conditionalUpgrade && !prompt
                        ? try Self.upgradeOptions(services, accountID: accountID) : nil
                    var response = try JSONAPI.json(
                        SignedIn(
                            accountID: accountID.uuidString.lowercased(),
                            sessionID: session.id.uuidString.lowercased(),
                            redirectTo: PasswordlessPolicyEnforcement.destination(
                                prompt: prompt,
                                returnTo: ReturnTo.sanitize(body.returnTo) ?? ReturnTo.fallback),
                            passkeyUpgrade: upgrade))
                    response.setCookie(cookie)
                    services.log.info(
                        "signin.password", ["step": "signedIn", "account": accountID.uuidString])
                    return response
                }
            }
        }

        api.add(.post, "/api/signup/password") { request, _ throws(APIError) in
            let body = try JSONAPI.decode(PasswordSignUpRequest.self, request)
            let accountID = try Self.passwordSignUp(
                services, email: body.email, displayName: body.displayName, password: body.password,
                clientAddress: request.remoteAddress)
            services.emailVerification.sendAfterSignUp(accountID: accountID, request: request)
            return try services.guarded("signup.password.session") {
                let (cookie, session) = try services.startSession(
                    accountID: accountID, amr: AuthenticationMethods.password, request: request)
                var response = try JSONAPI.json(
                    SignedIn(
                        accountID: accountID.uuidString.lowercased(),
                        sessionID: session.id.uuidString.lowercased(),
                        redirectTo: ReturnTo.sanitize(body.returnTo) ?? ReturnTo.fallback, passkeyUpgrade: nil
                    ),
                    status: .created)
                response.setCookie(cookie)
                return response
            }
        }

        api.add(.post, "/api/passkeys/authentication/start") { _, _ throws(APIError) in
            return try services.guarded("authentication.start") {
                let (id, challenge) = try PasskeyStore.createAuthenticationChallenge(
                    lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds,
                    on: services.pool)
                return try JSONAPI.json(
                    ChallengeResponse(
                        challengeID: id.uuidString.lowercased(),
                        options: services.requestOptions(challenge: challenge)))
            }
        }

        api.add(.post, "/api/passkeys/authentication/finish") { request, _ throws(APIError) in
            let body = try JSONAPI.decode(PasskeyFinishRequest.self, request)
            let challengeID = try JSONAPI.uuid(body.challengeID)
            func failed(_ reason: String, account: UUID?) {
                services.metrics.increment("auth_sign_ins_total", ["method": "passkey", "result": "failure"])
                services.record(
                    AuditEvent(
                        kind: .signInFailed, actor: .user, accountID: account,
                        clientAddress: request.remoteAddress,
                        detail: ["method": "passkey", "reason": reason]))
            }
            return try services.guarded("authentication.finish") {
                guard
                    let challenge = try PasskeyStore.consumeAuthenticationChallenge(
                        id: challengeID, on: services.pool)
                else {
                    services.log.warning(
                        "failed", ["step": "authentication.consumeChallenge", "reason": "challengeUnusable"])
                    failed("challenge_unusable", account: nil)
                    throw APIError.challengeInvalid
                }
                guard let rawID = try? Base64URL.decode(body.credential.rawId), !rawID.isEmpty,
                    let (record, userHandle, accountDisabled) = try PasskeyStore.find(
                        credentialID: rawID, on: services.pool)
                else {
                    services.log.warning(
                        "failed", ["step": "authentication.findCredential", "reason": "unknownCredential"])
                    failed("unknown_credential", account: nil)
                    var error = APIError(
                        status: .unauthorized, code: "unknown_credential",
                        message: "This passkey is not registered here. Use another passkey or your password.")
                    error.unknownCredential = .init(rpId: services.rpID, credentialId: body.credential.rawId)
                    throw error
                }
                let stored = record.stored(userHandle: userHandle)
                let verified: VerifiedAuthentication
                do {
                    verified = try services.authenticationVerifier.verify(
                        body.credential, expectedChallenge: challenge, credential: stored,
                        requireUserVerification: true,
                        requireUserHandle: true)
                } catch {
                    services.log.warning(
                        "failed", ["step": "authentication.verifyAssertion", "reason": webAuthnReason(error)])
                    failed("verification_failed", account: record.accountID)
                    throw APIError.verificationFailed
                }
                // A disabled account gets the answer of a failed verification: nothing tells
                // the caller that the account exists.
                if accountDisabled {
                    services.log.warning(
                        "failed", ["step": "authentication.accountState", "reason": "accountDisabled"])
                    failed("account_disabled", account: record.accountID)
                    throw APIError.verificationFailed
                }
                guard services.admitSignCount(verified, of: record, clientAddress: request.remoteAddress)
                else {
                    failed("counter_regression", account: record.accountID)
                    throw APIError.verificationFailed
                }
                let amr = AuthenticationMethods.passkey(
                    backupEligible: record.backupEligible, userVerified: verified.userVerified)
                // The passkey's use, the session and its audit event commit together.
                let (cookie, session) = try services.pool.withTransaction { connection in
                    try PasskeyStore.recordUse(
                        id: record.id, signCount: verified.newSignCount, backedUp: verified.backedUp,
                        on: connection)
                    let started = try services.startSession(
                        accountID: record.accountID, amr: amr, request: request, on: connection)
                    try AuditLog.record(
                        AuditEvent(
                            kind: .signInSucceeded, actor: .user, accountID: record.accountID,
                            clientAddress: request.remoteAddress, detail: ["method": "passkey"]),
                        on: connection)
                    return started
                }
                services.metrics.increment("auth_sign_ins_total", ["method": "passkey", "result": "success"])
                var response = try JSONAPI.json(
                    SignedIn(
                        accountID: record.accountID.uuidString.lowercased(),
                        sessionID: session.id.uuidString.lowercased(),
                        redirectTo: ReturnTo.sanitize(body.returnTo) ?? ReturnTo.fallback, passkeyUpgrade: nil
                    ))
                response.setCookie(cookie)
                services.log.info(
                    "signin.passkey", ["step": "signedIn", "account": record.accountID.uuidString])
                return response
            }
        }

        api.add(.post, "/api/passkeys/signup/start") { request, _ throws(APIError) in
            let body = try JSONAPI.decode(PasskeySignUpStartRequest.self, request)
            return try services.guarded("signup.passkey.start") {
                let registration = try PasskeyStore.createAccountRegistration(
                    lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds,
                    on: services.pool)
                let email = body.email.flatMap(EmailAddress.init)?.address ?? ""
                let name = body.displayName.flatMap(AccountStore.validDisplayName) ?? email
                let options = services.creationOptions(
                    challenge: registration.challenge, userHandle: registration.userHandle, name: email,
                    displayName: name, exclude: [], conditional: false)
                return try JSONAPI.json(
                    PasskeySignUpStart(
                        registrationID: registration.id.uuidString.lowercased(), options: options))
            }
        }

        api.add(.post, "/api/passkeys/signup/finish") { request, _ throws(APIError) in
            let body = try JSONAPI.decode(PasskeySignUpFinishRequest.self, request)
            let registrationID = try JSONAPI.uuid(body.registrationID)
            guard let email = EmailAddress(body.email) else { throw APIError.invalidEmail }
            guard let displayName = AccountStore.validDisplayName(body.displayName) else {
                throw APIError.invalidDisplayName
            }
            try services.checkSignUpThrottle(email: email, clientAddress: request.remoteAddress)
            return try services.guarded("signup.passkey.finish") {
                let (accountID, cookie, session) = try services.pool.withTransaction { connection in
                    guard
                        let registration = try PasskeyStore.completeAccountRegistration(
                            id: registrationID, on: connection)
                    else {
                        services.log.warning(
                            "failed",
                            ["step": "signup.completeRegistration", "reason": "registrationUnusable"])
                        throw APIError.challengeInvalid
                    }
                    let verified: VerifiedRegistration
                    do {
                        verified = try services.registrationVerifier.verify(
                            body.credential, expectedChallenge: registration.challenge,
                            requireUserPresence: true,
                            requireUserVerification: true)
                    } catch {
                        services.log.warning(
                            "failed", ["step": "signup.verifyCredential", "reason": webAuthnReason(error)])
                        throw APIError.verificationFailed
                    }
                    // An address held by another account answers as a new one (no enumeration):
                    // this account holds it unverified, and `sendAfterSignUp` tells the owner.
                    try AccountStore.insertAccount(
                        id: registration.prospectiveAccountID, displayName: displayName, email: email,
                        userHandle: registration.userHandle, on: connection)
                    let passkeyName = AccountServices.defaultPasskeyName(verified)
                    do {
                        _ = try PasskeyStore.insert(
                            verified, accountID: registration.prospectiveAccountID,
                            name: passkeyName, on: connection)
                    } catch PasskeyStore.InsertError.credentialExists {
                        throw APIError.credentialExists
                    }
                    try AuditLog.record(
                        AuditEvent(
                            kind: .accountCreated, actor: .user, accountID: registration.prospectiveAccountID,
                            clientAddress: request.remoteAddress, detail: ["method": "passkey"]),
                        on: connection)
                    try AuditLog.record(
                        AuditEvent(
                            kind: .passkeyAdded, actor: .user, accountID: registration.prospectiveAccountID,
                            clientAddress: request.remoteAddress,
                            detail: ["ceremony": "sign_up", "name": passkeyName]), on: connection)
                    let amr = AuthenticationMethods.passkey(
                        backupEligible: verified.backupEligible, userVerified: verified.userVerified)
                    let (cookie, session) = try services.startSession(
                        accountID: registration.prospectiveAccountID, amr: amr, request: request,
                        on: connection)
                    return (registration.prospectiveAccountID, cookie, session)
                }
                services.log.info("signup.passkey", ["step": "created", "account": accountID.uuidString])
                services.emailVerification.sendAfterSignUp(accountID: accountID, request: request)
                var response = try JSONAPI.json(
                    SignedIn(
                        accountID: accountID.uuidString.lowercased(),
                        sessionID: session.id.uuidString.lowercased(),
                        redirectTo: ReturnTo.sanitize(body.returnTo) ?? ReturnTo.fallback, passkeyUpgrade: nil
                    ),
                    status: .created)
                response.setCookie(cookie)
                return response
            }
        }

        api.add(.post, "/api/signout") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            return try services.guarded("signout") {
                try services.sessions.signOut(session, clientAddress: request.remoteAddress)
                var response = HTTPResponse(status: .noContent)
                response.setCookie(services.cookies.expiredSession())
                return response
            }
        }
    }

    /// The conditional upgrade offered right after a password sign-in: a registration
    /// challenge bound to the account that just proved its password, marked conditional
    /// (so UP=0 is accepted for it alone), with a short lifetime.
    static func upgradeOptions(_ services: AccountServices, accountID: UUID) throws -> PasskeyUpgrade? {
        guard let account = try AccountStore.summary(accountID: accountID, on: services.pool) else {
            return nil
        }
        let existing = try PasskeyStore.list(accountID: accountID, on: services.pool)
        let (id, challenge) = try PasskeyStore.createRegistrationChallenge(
            accountID: accountID, conditional: true,
            lifetimeSeconds: services.configuration.webAuthn.upgradeChallengeLifetimeSeconds,
            on: services.pool)
        let options = services.creationOptions(
            challenge: challenge, userHandle: account.userHandle, name: account.email,
            displayName: account.displayName,
            exclude: existing, conditional: true)
        services.metrics.increment("auth_passkey_upgrades_total", ["result": "offered"])
        services.record(AuditEvent(kind: .passkeyUpgradeOffered, actor: .user, accountID: accountID))
        return PasskeyUpgrade(challengeID: id.uuidString.lowercased(), options: options)
    }

    /// Validates and creates a password account; shared by the form and the JSON API. An
    /// address another account holds answers exactly as a new one: the new account holds it
    /// unverified, and `sendAfterSignUp` mails a verified owner a notice instead of a code.
    static func passwordSignUp(
        _ services: AccountServices, email: String, displayName: String, password: String,
        clientAddress: String = ""
    )
        throws(APIError) -> UUID
    {
        guard services.configuration.passwordless.passwordSignUp else {
            throw PasswordlessPolicyEnforcement.passwordSignUpDisabled
        }
        guard let address = EmailAddress(email) else { throw APIError.invalidEmail }
        guard let name = AccountStore.validDisplayName(displayName) else { throw APIError.invalidDisplayName }
        if let problem = PasswordPolicy.check(password, email: address.normalized) {
            throw APIError.weakPassword(problem)
        }
        try services.checkSignUpThrottle(email: address, clientAddress: clientAddress)
        return try services.guarded("signup.password") {
            let hash = try services.hasher.hash(password)
            let id = try AccountStore.createWithPassword(
                displayName: name, email: address, passwordHash: hash, pool: services.pool,
                audit: AuditEvent(
                    kind: .accountCreated, actor: .user, clientAddress: clientAddress,
                    detail: ["method": "password"]))
            services.log.info("signup.password", ["step": "created", "account": id.uuidString])
            return id
        }
    }
}
