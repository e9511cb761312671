import Crypto
import Foundation
import HTTPServer
import LoginPages
import Postgres
import WebAuthnCore

/// What the sign-in, sign-up, passkey and account endpoints share.
struct AccountServices: Sendable {
    let configuration: Configuration
    let pool: PostgresPool
    let log: Log
    let hasher: PasswordHasher
    let sessions: SessionStore
    let csrf: CSRFProtection
    let throttle: SignInThrottle
    let mailer: Mailer
    let metrics: Metrics
    /// The reloadable clients, whose Android apps add passkey origins; nil: the startup ones.
    let clients: ReloadableClients?

    init(
        configuration: Configuration, pool: PostgresPool, log: Log, hasher: PasswordHasher,
        mailTransport: any MailTransport = DevelopmentMailbox(), metrics: Metrics = Metrics(),
        clients: ReloadableClients? = nil
    ) {
        self.configuration = configuration
        self.clients = clients
        self.metrics = metrics
        self.mailer = Mailer(transport: mailTransport, log: log)
        self.pool = pool
        self.log = log
        self.hasher = hasher
        let cookies = SessionCookies(configuration: configuration)
        sessions = SessionStore(pool: pool, settings: configuration.sessions, cookies: cookies)
        csrf = CSRFProtection(cookies: cookies, allowedOrigin: configuration.issuerOrigin)
        throttle = SignInThrottle(pool: pool, settings: configuration.signInThrottle)
    }

    var cookies: SessionCookies { sessions.cookies }
    var rpID: String { configuration.relyingPartyID }

    /// The issuer's origin, the configured extra and related origins, and the
    /// `android:apk-key-hash:` origins of the current clients' Android apps.
    var webAuthnOrigins: Set<String> {
        clients?.current.webAuthnOrigins ?? configuration.allowedWebAuthnOrigins
    }

    var registrationVerifier: RegistrationVerifier {
        RegistrationVerifier(rpID: rpID, allowedOrigins: webAuthnOrigins, acceptUnverifiedAttestation: true)
    }

    var authenticationVerifier: AuthenticationVerifier {
        AuthenticationVerifier(rpID: rpID, allowedOrigins: webAuthnOrigins)
    }

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

    /// The current-password check of a password change: one guess on the same budget as a
    /// sign-in, counted before Argon2id runs. Throws 403 `wrong_password`, or 429 while the
    /// password is locked.
    func verifyCurrentPassword(_ given: String?, against hash: String, email: String, clientAddress: String)
        throws
    {
        guard let given else { throw APIError.wrongPassword }
        let key = EmailAddress.normalize(email)
        if let wait = try throttle.admit(accountKey: key, address: clientAddress) {
            log.warning(
                "password.change",
                ["step": "throttle", "reason": "tooManyFailures", "address": clientAddress])
            throw APIError.passwordThrottled(retryAfter: wait)
        }
        guard try hasher.verify(given, against: hash).isValid else { throw APIError.wrongPassword }
        try throttle.recordSuccess(accountKey: key, address: clientAddress)
    }

    /// Applies `passkeys.on_counter_regression` to a verified assertion whose signature counter
    /// did not grow (a possible clone): logs it, counts it and records
    /// `passkey.counter_regression` either way; false when the policy refuses the assertion.
    /// Every ceremony that accepts an assertion (sign-in, re-authentication) asks here.
    func admitSignCount(_ verified: VerifiedAuthentication, of passkey: PasskeyRecord, clientAddress: String)
        -> Bool
    {
        guard verified.possibleClone else { return true }
        let allowed = configuration.passkeys.onCounterRegression.allowsSignIn(afterCounterRegression: true)
        let action = allowed ? "warned" : "refused"
        log.warning(
            "passkey.signCount",
            [
                "step": "authentication.signCount", "reason": "possibleClone",
                "passkey": passkey.id.uuidString,
                "action": action,
            ])
        metrics.increment("auth_passkey_counter_regressions_total", ["action": action])
        record(
            AuditEvent(
                kind: .passkeyCounterRegression, actor: .system, accountID: passkey.accountID,
                clientAddress: clientAddress,
                detail: [
                    "passkey": passkey.id.uuidString.lowercased(), "stored": String(passkey.signCount),
                    "received": String(verified.newSignCount), "action": action,
                ]))
        return allowed
    }

    /// Records an event that stands alone (a sign-in, a failure) on the pool. A failure to
    /// write it is logged and does not fail the request it describes.
    func record(_ event: AuditEvent) {
        do {
            try AuditLog.record(event, on: pool)
        } catch {
            log.error(
                "audit.record", ["event": event.kind.rawValue, "reason": String(describing: type(of: error))])
        }
    }

    // MARK: - Helpers for handlers

    /// Runs `body`, turning an unavailable database into 503 and other database and unexpected
    /// errors into a logged 500 with a generic body.
    func guarded<T>(_ step: String, _ body: () throws -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            throw APIError(
                status: error.status,
                code: error.status == .unsupportedMediaType ? "unsupported_media_type" : "invalid_request",
                message: error.message)
        } catch CryptoError.overloaded {
            throw APIError.busy
        } catch let error as PostgresError where error.isUnavailable {
            log.warning("request.failed", ["step": step, "reason": "\(error.kind)"])
            throw APIError.busy
        } catch {
            let detail = (error as? PostgresError).map { "\($0.kind)" } ?? String(describing: type(of: error))
            log.error("request.failed", ["step": step, "reason": detail])
            throw APIError(
                status: .internalServerError, code: "server_error", message: "Something went wrong.")
        }
    }

    func requireSession(_ request: HTTPRequest) throws(APIError) -> CurrentSession {
        let session = try guarded("session.lookup") { try sessions.current(request) }
        guard let session else { throw APIError.notSignedIn }
        return session
    }

    /// The session, when its user authenticated within `sessions.reauthentication_seconds`
    /// (and not only through a recovery): what adding or removing a passkey and setting,
    /// changing or removing the password need. Otherwise `reauthentication_required`.
    func requireRecentSession(_ request: HTTPRequest) throws(APIError) -> CurrentSession {
        let session = try requireSession(request)
        guard session.mayChangeCredentials(windowSeconds: configuration.sessions.reauthenticationSeconds)
        else {
            log.info(
                "reauthentication",
                ["step": "checkRecency", "reason": "staleSignIn", "account": session.accountID.uuidString])
            throw APIError.reauthenticationRequired
        }
        return session
    }

    /// Starts a session and returns the cookie to set. The session the browser held before
    /// (its session cookie, live or not) ends in the same transaction: signing in again, as
    /// someone else or for `prompt=login`, never leaves the old session usable on the server.
    /// `fromRecovery` marks the session a completed recovery opens (see `CurrentSession`).
    func startSession(
        accountID: UUID, amr: [String], request: HTTPRequest, fromRecovery: Bool = false,
        on db: (any SQLExecutor)? = nil
    )
        throws
        -> (Cookie, CurrentSession)
    {
        let agent = request.headers["User-Agent"] ?? ""
        let previous = request.cookies[cookies.sessionName]
        let created =
            if let db {
                try sessions.create(
                    accountID: accountID, amr: amr, userAgent: agent, clientAddress: request.remoteAddress,
                    fromRecovery: fromRecovery, replacing: previous, on: db)
            } else {
                try sessions.create(
                    accountID: accountID, amr: amr, userAgent: agent, clientAddress: request.remoteAddress,
                    replacing: previous)
            }
        return (cookies.session(created.token), created.session)
    }

    func pageContext(_ request: HTTPRequest, csrfToken: String) -> PageContext {
        let language = PageLanguage.negotiate(
            uiLocales: request.queryValue("ui_locales"), acceptLanguage: request.headers["Accept-Language"])
        let kept = request.queryItems.filter { $0.name != "ui_locales" }
        var components = URLComponents()
        components.path = request.path
        if !kept.isEmpty { components.queryItems = kept.map { URLQueryItem(name: $0.name, value: $0.value) } }
        return PageContext(
            language: language, siteName: configuration.relyingPartyName, csrfToken: csrfToken,
            path: components.string ?? request.path)
    }

    // MARK: - WebAuthn options

    static let algorithms: [COSEAlgorithmIdentifier] = [.es256, .eddsa, .rs256]

    /// The answer to a modal registration start for an existing account (the account page,
    /// recovery): creation options for `challenge` that exclude the account's passkeys, so an
    /// authenticator that already holds one says so instead of making a second.
    func registrationStartResponse(account: AccountSummary, challengeID: UUID, challenge: [UInt8]) throws
        -> HTTPResponse
    {
        let existing = try PasskeyStore.list(accountID: account.id, on: pool)
        let options = creationOptions(
            challenge: challenge, userHandle: account.userHandle, name: account.email,
            displayName: account.displayName, exclude: existing, conditional: false)
        return try JSONAPI.json(
            AuthenticationAPI.ChallengeResponse(
                challengeID: challengeID.uuidString.lowercased(), options: options))
    }

    func creationOptions(
        challenge: [UInt8], userHandle: [UInt8], name: String, displayName: String, exclude: [PasskeyRecord],
        conditional: Bool
    ) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: RelyingPartyEntity(id: rpID, name: configuration.relyingPartyName),
            user: UserEntityJSON(id: Base64URL.encode(userHandle), name: name, displayName: displayName),
            challenge: Base64URL.encode(challenge),
            pubKeyCredParams: Self.algorithms.map { PublicKeyCredentialParameters(alg: $0) },
            timeout: UInt32(
                (conditional
                    ? configuration.webAuthn.upgradeChallengeLifetimeSeconds
                    : configuration.webAuthn.challengeLifetimeSeconds) * 1000),
            excludeCredentials: exclude.map {
                PublicKeyCredentialDescriptorJSON(
                    id: Base64URL.encode($0.credentialID),
                    transports: $0.transports.isEmpty ? nil : $0.transports)
            },
            authenticatorSelection: AuthenticatorSelectionCriteria(
                residentKey: .required, requireResidentKey: true,
                userVerification: conditional ? .preferred : .required),
            hints: conditional ? nil : [.clientDevice],
            attestation: AttestationConveyancePreference.none,
            extensions: AuthenticationExtensionsClientInputsJSON(credProps: true))
    }

    func requestOptions(challenge: [UInt8]) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(
            challenge: Base64URL.encode(challenge),
            timeout: UInt32(configuration.webAuthn.challengeLifetimeSeconds * 1000),
            rpId: rpID, allowCredentials: [], userVerification: .required)
    }

    /// A default name for a new passkey: the provider's, else a generic one.
    static func defaultPasskeyName(_ registration: VerifiedRegistration) -> String {
        PasskeyProviders.name(forAAGUID: registration.aaguid) ?? "Passkey"
    }

    static func cleanName(_ text: String?, maxLength: Int) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= maxLength,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return trimmed
    }
}

/// `return_to`: only a same-origin relative path (`/x…`), never `//host`, `/\host`, a scheme
/// or control characters, so the sign-in pages cannot be used as an open redirect.
enum ReturnTo {
    static let fallback = "/account"

    static func sanitize(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= 4_096, value.hasPrefix("/") else { return nil }
        if value.hasPrefix("//") || value.contains("\\") { return nil }
        if value.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) { return nil }
        return value
    }
}
