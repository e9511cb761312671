import Crypto
import Foundation
import HTTPServer
import LoginPages
import Postgres
import WebAuthnCore

/// Account recovery as JSON (what /recover's script calls). See docs/api.md.
///
/// start → a code mailed to a verified address → verify → a recovery session (its own
/// cookie) that can do one thing: register a passkey or set a password. In the same
/// transaction every session of the account ends and every token of the account is revoked,
/// and a new session signs the user in; that session does not count as a recent sign-in for
/// further credential changes. `end-other-sessions` is "sign out everywhere else".
///
/// Neither start nor verify tells whether an address has an account: start answers 202 with
/// one fixed body, and verify answers `invalid_code` alike for unknown addresses and wrong
/// codes, after comparable work (a digest and a database round trip).
struct RecoveryAPI: Sendable {
    let services: AccountServices

    struct StartRequest: Decodable {
        var email: String
        var uiLocales: String?

        enum CodingKeys: String, CodingKey {
            case email
            case uiLocales = "ui_locales"
        }
    }

    struct Started: Encodable, Equatable {
        var status = "accepted"
        var message =
            "If this address belongs to an account with a verified email address, a code is on its way."
    }

    struct VerifyRequest: Decodable {
        var email: String
        var code: String
    }

    struct Verified: Encodable {
        var status = "verified"
        var methods = ["passkey", "password"]
        var expiresIn: Int

        enum CodingKeys: String, CodingKey {
            case status
            case methods
            case expiresIn = "expires_in"
        }
    }

    struct PasswordRequest: Decodable {
        var newPassword: String

        enum CodingKeys: String, CodingKey {
            case newPassword = "new_password"
        }
    }

    struct OtherSessionsEnded: Encodable {
        var revoked: Int
    }

    static let invalidCode = APIError(
        status: .badRequest, code: "invalid_code",
        message: "This code is not valid. Check it, or ask for a new one.")
    static let codeExpired = APIError(
        status: .badRequest, code: "code_expired", message: "This code has expired. Ask for a new one.")
    static let recoveryRequired = APIError(
        status: .unauthorized, code: "recovery_required",
        message: "This recovery has expired or was already used. Start again.")

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        let services = services
        let throttle = RecoveryThrottle(pool: services.pool, settings: services.configuration.recovery)

        api.add(.post, "/api/recovery/start") { request, _ throws(APIError) in
            let body = try JSONAPI.decode(StartRequest.self, request)
            guard let address = EmailAddress(body.email) else { throw APIError.invalidEmail }
            let language = PageLanguage.negotiate(
                uiLocales: body.uiLocales, acceptLanguage: request.headers["Accept-Language"])
            try services.guarded("recovery.start") {
                if let wait = try throttle.hit(
                    .start, email: address.normalized, client: request.remoteAddress)
                {
                    services.log.warning(
                        "recovery.start",
                        ["step": "throttle", "reason": "tooManyRequests", "address": request.remoteAddress])
                    throw APIError.throttled(retryAfter: wait)
                }
                try Self.start(
                    services, address: address, language: language, clientAddress: request.remoteAddress)
            }
            return try JSONAPI.json(Started(), status: .accepted)
        }

        api.add(.post, "/api/recovery/verify") { request, _ throws(APIError) in
            let body = try JSONAPI.decode(VerifyRequest.self, request)
            let key = EmailAddress.normalize(body.email)
            let token = try services.guarded("recovery.verify") { () throws -> String in
                if let wait = try throttle.hit(.verify, email: key, client: request.remoteAddress) {
                    services.log.warning(
                        "recovery.verify",
                        ["step": "throttle", "reason": "tooManyRequests", "address": request.remoteAddress])
                    throw APIError.throttled(retryAfter: wait)
                }
                return try Self.verify(services, normalizedEmail: key, code: body.code)
            }
            var response = try JSONAPI.json(
                Verified(expiresIn: services.configuration.recovery.sessionLifetimeSeconds))
            response.setCookie(RecoveryCookies(services.configuration).cookie(token))
            return response
        }

        api.add(.post, "/api/recovery/passkey/start") { request, _ throws(APIError) in
            let session = try Self.requireRecovery(services, request)
            return try services.guarded("recovery.passkey.start") {
                guard let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
                else {
                    throw Self.recoveryRequired
                }
                let (id, challenge) = try RecoveryStore.createPasskeyChallenge(
                    sessionID: session.id,
                    lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds,
                    on: services.pool)
                return try services.registrationStartResponse(
                    account: account, challengeID: id, challenge: challenge)
            }
        }

        api.add(.post, "/api/recovery/passkey/finish") { request, _ throws(APIError) in
            let token = request.cookies[RecoveryCookies(services.configuration).name] ?? ""
            let body = try JSONAPI.decode(AccountAPI.RegistrationFinishRequest.self, request)
            let challengeID = try JSONAPI.uuid(body.challengeID)
            return try services.guarded("recovery.passkey.finish") {
                let (accountID, cookie, session) = try services.pool.withTransaction { connection in
                    guard let recovery = try RecoveryStore.completeSession(token: token, on: connection)
                    else {
                        throw Self.recoveryRequired
                    }
                    guard
                        let challenge = try RecoveryStore.consumePasskeyChallenge(
                            id: challengeID, sessionID: recovery.id, on: connection)
                    else {
                        services.log.warning(
                            "failed", ["step": "recovery.consumeChallenge", "reason": "challengeUnusable"])
                        throw APIError.challengeInvalid
                    }
                    let verified: VerifiedRegistration
                    do {
                        // A recovery is the modal ceremony: user presence and verification required.
                        verified = try services.registrationVerifier.verify(
                            body.credential, expectedChallenge: challenge, requireUserPresence: true,
                            requireUserVerification: true)
                    } catch {
                        services.log.warning(
                            "failed", ["step": "recovery.verifyCredential", "reason": webAuthnReason(error)])
                        throw APIError.verificationFailed
                    }
                    let name =
                        AccountServices.cleanName(body.name, maxLength: 100)
                        ?? AccountServices.defaultPasskeyName(verified)
                    do {
                        _ = try PasskeyStore.insert(
                            verified, accountID: recovery.accountID, name: name, on: connection)
                    } catch PasskeyStore.InsertError.credentialExists {
                        throw APIError.credentialExists
                    }
                    try Self.recordCompletion(
                        services, accountID: recovery.accountID, method: .passkey, passkeyName: name,
                        request: request, on: connection)
                    let (cookie, session) = try services.startSession(
                        accountID: recovery.accountID, amr: AuthenticationMethods.emailRecovery,
                        request: request, fromRecovery: true, on: connection)
                    return (recovery.accountID, cookie, session)
                }
                return try Self.completed(
                    services, request, accountID: accountID, method: .passkey, cookie: cookie,
                    session: session)
            }
        }

        api.add(.post, "/api/recovery/password") { request, _ throws(APIError) in
            let recovery = try Self.requireRecovery(services, request)
            let token = request.cookies[RecoveryCookies(services.configuration).name] ?? ""
            let body = try JSONAPI.decode(PasswordRequest.self, request)
            let account = try services.guarded("recovery.password") {
                try AccountStore.summary(accountID: recovery.accountID, on: services.pool)
            }
            guard let account else { throw Self.recoveryRequired }
            if let problem = PasswordPolicy.check(body.newPassword, email: account.email) {
                throw APIError.weakPassword(problem)
            }
            return try services.guarded("recovery.password") {
                let hash = try services.hasher.hash(body.newPassword)
                let (cookie, session) = try services.pool.withTransaction { connection in
                    guard let completed = try RecoveryStore.completeSession(token: token, on: connection),
                        completed.accountID == account.id
                    else { throw Self.recoveryRequired }
                    try AccountStore.setPassword(accountID: account.id, hash: hash, on: connection)
                    // The new password works at once, even if guesses had locked the old one.
                    try SignInThrottle.clearAccount(account.id, on: connection)
                    try AuditLog.record(
                        AuditEvent(
                            kind: .passwordReset, actor: .user, accountID: account.id,
                            clientAddress: request.remoteAddress, detail: ["via": "recovery"]),
                        on: connection)
                    try Self.recordCompletion(
                        services, accountID: account.id, method: .password, passkeyName: nil,
                        request: request,
                        on: connection)
                    return try services.startSession(
                        accountID: account.id, amr: AuthenticationMethods.emailRecovery, request: request,
                        fromRecovery: true, on: connection)
                }
                return try Self.completed(
                    services, request, accountID: account.id, method: .password, cookie: cookie,
                    session: session)
            }
        }

        api.add(.post, "/api/recovery/end-other-sessions") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            return try services.guarded("recovery.endOtherSessions") {
                let revoked = try services.pool.withTransaction { connection in
                    let count = try SignOutEverywhere.run(
                        accountID: session.accountID, keep: session.id, reason: .signedOutEverywhere,
                        on: connection)
                    try AuditLog.record(
                        AuditEvent(
                            kind: .sessionsRevoked, actor: .user, accountID: session.accountID,
                            clientAddress: request.remoteAddress,
                            detail: ["scope": "others", "count": String(count)]),
                        on: connection)
                    return count
                }
                services.log.info(
                    "recovery.endOtherSessions",
                    ["account": session.accountID.uuidString, "revoked": String(revoked)])
                return try JSONAPI.json(OtherSessionsEnded(revoked: revoked))
            }
        }
    }

    // MARK: - Steps

    /// Issues and mails a code when the address belongs to an account and is verified. The
    /// unknown-address path computes the same digest and makes one database round trip, and
    /// the mail leaves on another thread, so the answer's timing says little.
    static func start(
        _ services: AccountServices, address: EmailAddress, language: PageLanguage, clientAddress: String
    ) throws {
        let settings = services.configuration.recovery
        let code = RecoveryCode.generate()
        let salt = RecoveryCode.newSalt()
        let digest = RecoveryCode.digest(code, salt: salt)
        guard let target = try RecoveryStore.target(normalizedEmail: address.normalized, on: services.pool)
        else {
            try services.pool.query(
                "SELECT 1 FROM recovery_codes WHERE normalized_email = \(address.normalized) LIMIT 1")
            services.log.info("recovery.start", ["step": "lookup", "reason": "noAccount"])
            return
        }
        guard target.verified else {
            try AuditLog.record(
                AuditEvent(
                    kind: .recoveryStarted, actor: .user, accountID: target.accountID,
                    clientAddress: clientAddress,
                    detail: ["code_sent": "false", "reason": "email_unverified"]),
                on: services.pool)
            services.log.info(
                "recovery.start",
                ["step": "lookup", "reason": "emailUnverified", "account": target.accountID.uuidString])
            return
        }
        try services.pool.withTransaction { connection in
            try RecoveryStore.insertCode(
                accountID: target.accountID, normalizedEmail: address.normalized, salt: salt, digest: digest,
                lifetimeSeconds: settings.codeLifetimeSeconds, on: connection)
            try AuditLog.record(
                AuditEvent(
                    kind: .recoveryStarted, actor: .user, accountID: target.accountID,
                    clientAddress: clientAddress,
                    detail: ["code_sent": "true"]),
                on: connection)
        }
        services.log.info("recovery.start", ["step": "codeIssued", "account": target.accountID.uuidString])
        var link = URLComponents(string: services.configuration.issuer + "/recover")
        link?.queryItems = [URLQueryItem(name: "email", value: target.email)]
        link?.fragment = "code=\(code)"
        let mail = RecoveryMail.code(
            to: target.email, code: code, link: link?.string ?? services.configuration.issuer + "/recover",
            minutes: max(1, settings.codeLifetimeSeconds / 60),
            siteName: services.configuration.relyingPartyName,
            language: language)
        let mailer = services.mailer
        DispatchQueue.global().async { mailer.send(mail) }
    }

    /// Checks a code and opens a recovery session; returns its cookie token.
    static func verify(_ services: AccountServices, normalizedEmail: String, code typed: String) throws
        -> String
    {
        let settings = services.configuration.recovery
        let code = RecoveryCode.normalize(typed) ?? ""
        let rows = try RecoveryStore.recentCodes(normalizedEmail: normalizedEmail, on: services.pool)
        var matched: RecoveryStore.CodeRow?
        if rows.isEmpty {
            _ = RecoveryCode.digest(code, salt: RecoveryCode.newSalt())
        }
        for row in rows where constantTimeEquals(RecoveryCode.digest(code, salt: row.salt), row.digest) {
            matched = matched ?? row
        }
        guard let matched, !code.isEmpty else {
            try RecoveryStore.countWrongCode(normalizedEmail: normalizedEmail, on: services.pool)
            services.log.warning("recovery.verify", ["step": "checkCode", "reason": "wrongCode"])
            throw invalidCode
        }
        if matched.consumed {
            services.log.warning("recovery.verify", ["step": "checkCode", "reason": "codeUsed"])
            throw invalidCode
        }
        if matched.expired {
            services.log.warning("recovery.verify", ["step": "checkCode", "reason": "codeExpired"])
            throw codeExpired
        }
        return try services.pool.withTransaction { connection in
            guard
                let accountID = try RecoveryStore.consumeCode(
                    id: matched.id, maxAttempts: settings.maxAttempts, on: connection)
            else {
                services.log.warning("recovery.verify", ["step": "consumeCode", "reason": "codeUnusable"])
                throw invalidCode
            }
            let token = try RecoveryStore.createSession(
                accountID: accountID, lifetimeSeconds: settings.sessionLifetimeSeconds, on: connection)
            services.log.info("recovery.verify", ["step": "sessionOpened", "account": accountID.uuidString])
            return token
        }
    }

    static func requireRecovery(_ services: AccountServices, _ request: HTTPRequest) throws(APIError)
        -> RecoveryStore.Session
    {
        let token = request.cookies[RecoveryCookies(services.configuration).name] ?? ""
        let session = try services.guarded("recovery.session") {
            try RecoveryStore.liveSession(token: token, on: services.pool)
        }
        guard let session else { throw recoveryRequired }
        return session
    }

    /// Ends every session and revokes every token of the account (the new session starts
    /// after this), then records the completion, inside the recovery's transaction.
    static func recordCompletion(
        _ services: AccountServices, accountID: UUID, method: RecoveryMail.Method, passkeyName: String?,
        request: HTTPRequest, on connection: some SQLExecutor
    ) throws {
        let ended = try SignOutEverywhere.run(
            accountID: accountID, keep: nil, reason: .recovered, on: connection)
        if let passkeyName {
            try AuditLog.record(
                AuditEvent(
                    kind: .passkeyAdded, actor: .user, accountID: accountID,
                    clientAddress: request.remoteAddress,
                    detail: ["ceremony": "recovery", "name": passkeyName]),
                on: connection)
        }
        try AuditLog.record(
            AuditEvent(
                kind: .recoveryCompleted, actor: .user, accountID: accountID,
                clientAddress: request.remoteAddress,
                detail: ["method": method.rawValue, "sessions_revoked": String(ended)]),
            on: connection)
    }

    /// After the transaction: the notice mail, the signed-in answer, the recovery cookie gone.
    static func completed(
        _ services: AccountServices, _ request: HTTPRequest, accountID: UUID, method: RecoveryMail.Method,
        cookie: Cookie,
        session: CurrentSession
    ) throws -> HTTPResponse {
        services.log.info("recovery.completed", ["account": accountID.uuidString, "method": method.rawValue])
        if let account = try AccountStore.summary(accountID: accountID, on: services.pool) {
            services.mailer.send(
                RecoveryMail.recovered(
                    to: account.email, method: method, siteName: services.configuration.relyingPartyName,
                    language: PageLanguage.negotiate(
                        uiLocales: nil, acceptLanguage: request.headers["Accept-Language"])))
        }
        var response = try HTTPResponse.json(
            AuthenticationAPI.SignedIn(
                accountID: accountID.uuidString.lowercased(), sessionID: session.id.uuidString.lowercased(),
                redirectTo: ReturnTo.fallback, passkeyUpgrade: nil))
        response.setCookie(cookie)
        response.setCookie(RecoveryCookies(services.configuration).expired())
        return response
    }
}

/// The recovery session's cookie: its own name, so no other endpoint ever reads it;
/// `SameSite=Strict` and the `__Host-` prefix under https.
struct RecoveryCookies: Sendable {
    let secure: Bool
    let lifetimeSeconds: Int

    init(_ configuration: Configuration) {
        secure = configuration.usesHTTPS
        lifetimeSeconds = configuration.recovery.sessionLifetimeSeconds
    }

    var name: String { secure ? "__Host-recovery" : "recovery" }

    func cookie(_ token: String) -> Cookie {
        Cookie(
            name: name, value: token, path: "/", maxAge: lifetimeSeconds, secure: secure, httpOnly: true,
            sameSite: .strict)
    }

    func expired() -> Cookie {
        Cookie.expired(name: name, path: "/", secure: secure, httpOnly: true, sameSite: .strict)
    }
}
