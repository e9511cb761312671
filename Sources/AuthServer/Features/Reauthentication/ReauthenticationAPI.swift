import Crypto
import Foundation
import HTTPServer
import Postgres
import WebAuthnCore

/// Proving again, in a signed-in session, that its user holds the account: the current
/// password or one of the account's passkeys. Success moves the session's `auth_time` to now
/// and adds the method to its `amr`, so that the credential changes that need a recent
/// sign-in (`reauthentication_required`) work again. See docs/api.md.
struct ReauthenticationAPI: Sendable {
    let services: AccountServices

    struct PasswordRequest: Decodable {
        var password: String
    }

    static let noPassword = APIError(
        status: .conflict, code: "no_password", message: "This account has no password. Use a passkey.")
    static let wrongAccount = APIError(
        status: .forbidden, code: "wrong_account",
        message: "This passkey belongs to another account. Use a passkey of this account.")

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        let services = services

        api.add(.post, "/api/reauthenticate/password") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            let body = try JSONAPI.decode(PasswordRequest.self, request)
            try services.guarded("reauthenticate.password") {
                try Self.password(services, session: session, password: body.password, request: request)
            }
            return HTTPResponse(status: .noContent)
        }

        api.add(.post, "/api/reauthenticate/passkey/start") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            return try services.guarded("reauthenticate.passkey.start") {
                let passkeys = try PasskeyStore.list(accountID: session.accountID, on: services.pool)
                let (id, challenge) = try ReauthenticationStore.createChallenge(
                    sessionID: session.id,
                    lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds,
                    on: services.pool)
                var options = services.requestOptions(challenge: challenge)
                // Only this account's passkeys will do: the browser offers no other.
                options.allowCredentials = passkeys.map {
                    PublicKeyCredentialDescriptorJSON(
                        id: Base64URL.encode($0.credentialID),
                        transports: $0.transports.isEmpty ? nil : $0.transports)
                }
                return try JSONAPI.json(
                    AuthenticationAPI.ChallengeResponse(
                        challengeID: id.uuidString.lowercased(), options: options))
            }
        }

        api.add(.post, "/api/reauthenticate/passkey/finish") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            let body = try JSONAPI.decode(AuthenticationAPI.PasskeyFinishRequest.self, request)
            let challengeID = try JSONAPI.uuid(body.challengeID)
            try services.guarded("reauthenticate.passkey.finish") {
                try Self.passkey(
                    services, session: session, challengeID: challengeID, body.credential, request: request)
            }
            return HTTPResponse(status: .noContent)
        }
    }

    // MARK: - Steps

    /// Checks the account's current password; every wrong one counts against the account's and
    /// the client address's sign-in throttle, exactly as a failed sign-in does.
    static func password(
        _ services: AccountServices, session: CurrentSession, password: String, request: HTTPRequest
    ) throws {
        guard let account = try AccountStore.summary(accountID: session.accountID, on: services.pool) else {
            throw APIError.notSignedIn
        }
        let key = EmailAddress.normalize(account.email)
        let address = request.remoteAddress
        func failed(_ reason: String) {
            services.record(
                AuditEvent(
                    kind: .signInFailed, actor: .user, accountID: account.id, clientAddress: address,
                    detail: ["method": "password", "reason": reason, "step": "reauthentication"]))
        }
        guard let hash = try AccountStore.passwordHash(accountID: account.id, on: services.pool) else {
            throw noPassword
        }
        // Counted before Argon2id runs, on the budget of a sign-in (see SignInThrottle).
        if let wait = try services.throttle.admit(accountKey: key, address: address) {
            services.log.warning(
                "reauthenticate.password",
                ["step": "throttle", "reason": "tooManyFailures", "address": address])
            failed("throttled")
            throw APIError.passwordThrottled(retryAfter: wait)
        }
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
        try services.throttle.recordSuccess(accountKey: key, address: address)
        try recordReauthentication(
            services, session: session, amr: session.amr(adding: AuthenticationMethods.password),
            method: "password", request: request, on: services.pool)
    }

    /// Verifies an assertion for this session's challenge, made by a passkey of this session's
    /// account; the passkey's use and the session's new `auth_time` commit together.
    static func passkey(
        _ services: AccountServices, session: CurrentSession, challengeID: UUID,
        _ credential: AuthenticationResponseJSON, request: HTTPRequest
    ) throws {
        guard
            let challenge = try ReauthenticationStore.consumeChallenge(
                id: challengeID, sessionID: session.id, on: services.pool)
        else {
            services.log.warning(
                "failed", ["step": "reauthenticate.consumeChallenge", "reason": "challengeUnusable"])
            throw APIError.challengeInvalid
        }
        guard let rawID = try? Base64URL.decode(credential.rawId), !rawID.isEmpty,
            let (record, userHandle, _) = try PasskeyStore.find(credentialID: rawID, on: services.pool)
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
            throw wrongAccount
        }
        let stored = record.stored(userHandle: userHandle)
        let verified: VerifiedAuthentication
        do {
            // The user is known before the ceremony (allowCredentials), so a passkey that
            // returns no user handle (a non-discoverable one) is fine; one that does must match.
            verified = try services.authenticationVerifier.verify(
                credential, expectedChallenge: challenge, credential: stored, requireUserVerification: true,
                requireUserHandle: false)
        } catch {
            services.log.warning(
                "failed", ["step": "reauthenticate.verifyAssertion", "reason": webAuthnReason(error)])
            throw APIError.verificationFailed
        }
        guard services.admitSignCount(verified, of: record, clientAddress: request.remoteAddress) else {
            throw APIError.verificationFailed
        }
        let amr = session.amr(
            adding: AuthenticationMethods.passkey(
                backupEligible: record.backupEligible, userVerified: verified.userVerified))
        try services.pool.withTransaction { connection in
            try PasskeyStore.recordUse(
                id: record.id, signCount: verified.newSignCount, backedUp: verified.backedUp, on: connection)
            try recordReauthentication(
                services, session: session, amr: amr, method: "passkey", request: request, on: connection)
        }
    }

    static func recordReauthentication(
        _ services: AccountServices, session: CurrentSession, amr: [String], method: String,
        request: HTTPRequest,
        on db: some SQLExecutor
    ) throws {
        guard try SessionStore.reauthenticate(session, amr: amr, on: db) else { throw APIError.notSignedIn }
        try AuditLog.record(
            AuditEvent(
                kind: .reauthenticated, actor: .user, accountID: session.accountID,
                clientAddress: request.remoteAddress, detail: ["method": method]),
            on: db)
        services.log.info("reauthenticated", ["account": session.accountID.uuidString, "method": method])
    }
}

/// The one-time passkey challenges of re-authentication, bound to the session that asked.
enum ReauthenticationStore {
    static func createChallenge(sessionID: UUID, lifetimeSeconds: Int, on db: some SQLExecutor) throws -> (
        id: UUID, challenge: [UInt8]
    ) {
        let id = UUID.random()
        let challenge = PasskeyStore.newChallenge()
        try db.query(
            """
            INSERT INTO reauthentication_challenges (id, session_id, challenge, expires_at)
            VALUES (\(id), \(sessionID), \(challenge), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
        return (id, challenge)
    }

    /// Uses the challenge once; nil when it is unknown, used, expired or another session's.
    static func consumeChallenge(id: UUID, sessionID: UUID, on db: some SQLExecutor) throws -> [UInt8]? {
        try db.query(
            """
            UPDATE reauthentication_challenges SET consumed_at = now()
            WHERE id = \(id) AND session_id = \(sessionID) AND consumed_at IS NULL AND expires_at > now()
            RETURNING challenge
            """
        ).first?.decode("challenge")
    }
}
