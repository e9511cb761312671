import Crypto
import Foundation
import HTTPServer
import Postgres
import WebAuthnCore

/// The signed-in account's passkeys, password, profile and sessions, as JSON. Every call
/// needs the session cookie; state-changing ones also the CSRF token. See docs/api.md.
struct AccountAPI: Sendable {
    let services: AccountServices

    struct RegistrationFinishRequest: Decodable {
        var challengeID: String
        var credential: RegistrationResponseJSON
        var name: String?

        enum CodingKeys: String, CodingKey {
            case challengeID = "challenge_id"
            case credential
            case name
        }
    }

    struct PasskeyJSON: Encodable {
        var id: String
        var credentialID: String
        var name: String
        var provider: String?
        var aaguid: String
        var synced: Bool
        var backupEligible: Bool
        var transports: [String]
        var createdAt: String
        var lastUsedAt: String?

        init(_ record: PasskeyRecord) {
            id = record.id.uuidString.lowercased()
            credentialID = Base64URL.encode(record.credentialID)
            name = record.name
            provider = PasskeyProviders.name(forAAGUID: record.aaguid)
            aaguid = PasskeyProviders.uuidString(record.aaguid)
            synced = record.backedUp
            backupEligible = record.backupEligible
            transports = record.transports
            createdAt = iso8601(record.createdAt)
            lastUsedAt = record.lastUsedAt.map(iso8601)
        }

        enum CodingKeys: String, CodingKey {
            case id
            case credentialID = "credential_id"
            case name
            case provider
            case aaguid
            case synced
            case backupEligible = "backup_eligible"
            case transports
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
        }
    }

    struct PasskeyList: Encodable {
        var passkeys: [PasskeyJSON]
    }
    struct RenameRequest: Decodable {
        var name: String
    }

    /// What `PublicKeyCredential.signalAllAcceptedCredentials` takes.
    struct AllAcceptedCredentials: Encodable {
        var rpId: String
        var userId: String
        var allAcceptedCredentialIds: [String]
    }

    struct DeleteResult: Encodable {
        var signal: AllAcceptedCredentials
    }

    /// What `PublicKeyCredential.signalCurrentUserDetails` takes.
    struct CurrentUserDetails: Encodable {
        var rpId: String
        var userId: String
        var name: String
        var displayName: String
    }

    struct AccountJSON: Encodable {
        var id: String
        var email: String
        var emailVerified: Bool
        var displayName: String
        var hasPassword: Bool
        var canRemovePassword: Bool
        var createdAt: String
        var signal: CurrentUserDetails

        enum CodingKeys: String, CodingKey {
            case id
            case email
            case emailVerified = "email_verified"
            case displayName = "display_name"
            case hasPassword = "has_password"
            case canRemovePassword = "can_remove_password"
            case createdAt = "created_at"
            case signal
        }
    }

    struct ProfileRequest: Decodable {
        var displayName: String

        enum CodingKeys: String, CodingKey {
            case displayName = "display_name"
        }
    }
    struct PasswordChangeRequest: Decodable {
        var currentPassword: String?
        var newPassword: String

        enum CodingKeys: String, CodingKey {
            case currentPassword = "current_password"
            case newPassword = "new_password"
        }
    }

    struct SessionJSON: Encodable {
        var id: String
        var current: Bool
        var createdAt: String
        var lastSeenAt: String
        var amr: [String]
        var userAgent: String

        enum CodingKeys: String, CodingKey {
            case id
            case current
            case createdAt = "created_at"
            case lastSeenAt = "last_seen_at"
            case amr
            case userAgent = "user_agent"
        }
    }

    struct SessionList: Encodable {
        var sessions: [SessionJSON]
    }

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        let services = services

        api.add(.post, "/api/passkeys/registration/start") { request, _ throws(APIError) in
            let session = try services.requireRecentSession(request)
            return try services.guarded("registration.start") {
                guard let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
                else {
                    throw APIError.notSignedIn
                }
                let (id, challenge) = try PasskeyStore.createRegistrationChallenge(
                    accountID: account.id, conditional: false,
                    lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds,
                    on: services.pool)
                return try services.registrationStartResponse(
                    account: account, challengeID: id, challenge: challenge)
            }
        }

        api.add(.post, "/api/passkeys/registration/finish") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            let recent = session.mayChangeCredentials(
                windowSeconds: services.configuration.sessions.reauthenticationSeconds)
            let body = try JSONAPI.decode(RegistrationFinishRequest.self, request)
            let challengeID = try JSONAPI.uuid(body.challengeID)
            return try services.guarded("registration.finish") {
                guard
                    let (challenge, conditional) = try PasskeyStore.consumeRegistrationChallenge(
                        id: challengeID, accountID: session.accountID, on: services.pool)
                else {
                    services.log.warning(
                        "failed", ["step": "registration.consumeChallenge", "reason": "challengeUnusable"])
                    throw APIError.challengeInvalid
                }
                // A conditional upgrade's challenge is issued only by a password sign-in and
                // lives minutes: it is itself the recent authentication. A modal one needs it now.
                guard recent || conditional else {
                    services.log.info(
                        "reauthentication",
                        [
                            "step": "registration.finish", "reason": "staleSignIn",
                            "account": session.accountID.uuidString,
                        ])
                    throw APIError.reauthenticationRequired
                }
                let verified: VerifiedRegistration
                do {
                    // UP (and UV) may be absent only in the conditional upgrade that follows a
                    // password sign-in; every other registration requires both.
                    verified = try services.registrationVerifier.verify(
                        body.credential, expectedChallenge: challenge, requireUserPresence: !conditional,
                        requireUserVerification: !conditional)
                } catch {
                    services.log.warning(
                        "failed",
                        [
                            "step": "registration.verifyCredential", "reason": webAuthnReason(error),
                            "conditional": String(conditional),
                        ])
                    throw APIError.verificationFailed
                }
                let name =
                    AccountServices.cleanName(body.name, maxLength: 100)
                    ?? AccountServices.defaultPasskeyName(verified)
                let record: PasskeyRecord
                do {
                    record = try services.pool.withTransaction { connection in
                        let record = try PasskeyStore.insert(
                            verified, accountID: session.accountID, name: name, on: connection)
                        try AuditLog.record(
                            AuditEvent(
                                kind: .passkeyAdded, actor: .user, accountID: session.accountID,
                                clientAddress: request.remoteAddress,
                                detail: ["ceremony": conditional ? "conditional" : "modal", "name": name]),
                            on: connection)
                        return record
                    }
                } catch PasskeyStore.InsertError.credentialExists {
                    throw APIError.credentialExists
                }
                if conditional {
                    services.metrics.increment("auth_passkey_upgrades_total", ["result": "succeeded"])
                }
                services.log.info(
                    "passkey.registered",
                    ["account": session.accountID.uuidString, "conditional": String(conditional)])
                services.notifications.send(
                    .passkeyAdded(name: record.name), accountID: session.accountID, request: request)
                return try JSONAPI.json(PasskeyJSON(record), status: .created)
            }
        }

        api.add(.get, "/api/passkeys") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            return try services.guarded("passkeys.list") {
                try JSONAPI.json(
                    PasskeyList(
                        passkeys: try PasskeyStore.list(accountID: session.accountID, on: services.pool).map(
                            PasskeyJSON.init)))
            }
        }

        api.add(.patch, "/api/passkeys/:id") { request, context throws(APIError) in
            let session = try services.requireSession(request)
            let id = try JSONAPI.uuid(context.pathParameters["id"])
            let body = try JSONAPI.decode(RenameRequest.self, request)
            guard let name = AccountServices.cleanName(body.name, maxLength: 100) else {
                throw APIError(
                    status: .badRequest, code: "invalid_name", message: "Enter a name of 1 to 100 characters."
                )
            }
            return try services.guarded("passkeys.rename") {
                guard
                    try PasskeyStore.rename(
                        id: id, accountID: session.accountID, name: name, on: services.pool)
                else {
                    throw APIError.notFound
                }
                return HTTPResponse(status: .noContent)
            }
        }

        api.add(.delete, "/api/passkeys/:id") { request, context throws(APIError) in
            let session = try services.requireRecentSession(request)
            let id = try JSONAPI.uuid(context.pathParameters["id"])
            return try services.guarded("passkeys.delete") {
                // The last passkey of an account without a password is its only way in.
                let deleted = try services.pool.withTransaction { connection -> String? in
                    try connection.query("SELECT id FROM accounts WHERE id = \(session.accountID) FOR UPDATE")
                    let count: Int =
                        try connection.query(
                            "SELECT count(*) AS n FROM passkey_credentials WHERE account_id = \(session.accountID)"
                        )
                        .first?.decode("n") ?? 0
                    if count <= 1,
                        try AccountStore.passwordHash(accountID: session.accountID, on: connection) == nil
                    {
                        throw APIError(
                            status: .conflict, code: "last_credential",
                            message:
                                "This is your only way to sign in. Add another passkey or set a password first."
                        )
                    }
                    let name: String? = try connection.query(
                        "SELECT name FROM passkey_credentials WHERE id = \(id) AND account_id = \(session.accountID)"
                    ).first?.decode("name")
                    guard try PasskeyStore.delete(id: id, accountID: session.accountID, on: connection) else {
                        return nil
                    }
                    try AuditLog.record(
                        AuditEvent(
                            kind: .passkeyRemoved, actor: .user, accountID: session.accountID,
                            clientAddress: request.remoteAddress,
                            detail: ["passkey": id.uuidString.lowercased()]),
                        on: connection)
                    return name
                }
                guard let deleted else { throw APIError.notFound }
                services.notifications.send(
                    .passkeyRemoved(name: deleted), accountID: session.accountID, request: request)
                guard let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
                else {
                    throw APIError.notSignedIn
                }
                let remaining = try PasskeyStore.list(accountID: session.accountID, on: services.pool)
                return try JSONAPI.json(
                    DeleteResult(
                        signal: AllAcceptedCredentials(
                            rpId: services.rpID, userId: Base64URL.encode(account.userHandle),
                            allAcceptedCredentialIds: remaining.map { Base64URL.encode($0.credentialID) })))
            }
        }

        api.add(.get, "/api/account") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            return try services.guarded("account.get") {
                guard let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
                else {
                    throw APIError.notSignedIn
                }
                return try JSONAPI.json(try Self.accountJSON(services, account))
            }
        }

        api.add(.patch, "/api/account") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            let body = try JSONAPI.decode(ProfileRequest.self, request)
            guard let name = AccountStore.validDisplayName(body.displayName) else {
                throw APIError.invalidDisplayName
            }
            return try services.guarded("account.update") {
                try AccountStore.rename(accountID: session.accountID, displayName: name, on: services.pool)
                guard let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
                else {
                    throw APIError.notSignedIn
                }
                return try JSONAPI.json(try Self.accountJSON(services, account))
            }
        }

        api.add(.post, "/api/password") { request, _ throws(APIError) in
            let session = try services.requireRecentSession(request)
            let body = try JSONAPI.decode(PasswordChangeRequest.self, request)
            let account = try services.guarded("password.change") {
                try AccountStore.summary(accountID: session.accountID, on: services.pool)
            }
            guard let account else { throw APIError.notSignedIn }
            if let problem = PasswordPolicy.check(body.newPassword, email: account.email) {
                throw APIError.weakPassword(problem)
            }
            return try services.guarded("password.change") {
                if let current = try AccountStore.passwordHash(accountID: account.id, on: services.pool) {
                    try services.verifyCurrentPassword(
                        body.currentPassword, against: current, email: account.email,
                        clientAddress: request.remoteAddress)
                }
                let hash = try services.hasher.hash(body.newPassword)
                // The change, the end of every other session and of every token commit together.
                let ended = try services.pool.withTransaction { connection in
                    try AccountStore.setPassword(accountID: account.id, hash: hash, on: connection)
                    let ended = try SignOutEverywhere.run(
                        accountID: account.id, keep: session.id, reason: .passwordChanged, on: connection)
                    try AuditLog.record(
                        AuditEvent(
                            kind: .passwordChanged, actor: .user, accountID: account.id,
                            clientAddress: request.remoteAddress, detail: ["sessions_revoked": String(ended)]),
                        on: connection)
                    return ended
                }
                services.log.info(
                    "password.changed", ["account": account.id.uuidString, "sessionsRevoked": String(ended)])
                services.notifications.send(.passwordChanged, accountID: account.id, request: request)
                return HTTPResponse(status: .noContent)
            }
        }

        api.add(.delete, "/api/password") { request, _ throws(APIError) in
            let session = try services.requireRecentSession(request)
            return try services.guarded("password.remove") {
                guard try PasskeyStore.hasUsedPasskey(accountID: session.accountID, on: services.pool) else {
                    throw APIError(
                        status: .conflict, code: "passkey_required",
                        message: "Sign in with a passkey at least once before removing your password.")
                }
                let removed = try services.pool.withTransaction { connection in
                    let removed = try AccountStore.deletePassword(
                        accountID: session.accountID, on: connection)
                    if removed {
                        let ended = try SignOutEverywhere.run(
                            accountID: session.accountID, keep: session.id, reason: .passwordRemoved,
                            on: connection)
                        try AuditLog.record(
                            AuditEvent(
                                kind: .passwordRemoved, actor: .user, accountID: session.accountID,
                                clientAddress: request.remoteAddress,
                                detail: ["sessions_revoked": String(ended)]),
                            on: connection)
                    }
                    return removed
                }
                guard removed else {
                    throw APIError(
                        status: .conflict, code: "no_password", message: "This account has no password.")
                }
                services.log.info("password.removed", ["account": session.accountID.uuidString])
                services.notifications.send(.passwordRemoved, accountID: session.accountID, request: request)
                return HTTPResponse(status: .noContent)
            }
        }

        api.add(.get, "/api/sessions") { request, _ throws(APIError) in
            let session = try services.requireSession(request)
            return try services.guarded("sessions.list") {
                let list = try services.sessions.list(accountID: session.accountID).map {
                    SessionJSON(
                        id: $0.id.uuidString.lowercased(), current: $0.id == session.id,
                        createdAt: iso8601($0.createdAt),
                        lastSeenAt: iso8601($0.lastSeenAt), amr: $0.amr, userAgent: $0.userAgent)
                }
                return try JSONAPI.json(SessionList(sessions: list))
            }
        }

        api.add(.delete, "/api/sessions/:id") { request, context throws(APIError) in
            let session = try services.requireSession(request)
            let id = try JSONAPI.uuid(context.pathParameters["id"])
            return try services.guarded("sessions.revoke") {
                guard try services.sessions.revoke(id: id, accountID: session.accountID) else {
                    throw APIError.notFound
                }
                var response = HTTPResponse(status: .noContent)
                if id == session.id { response.setCookie(services.cookies.expiredSession()) }
                return response
            }
        }
    }

    static func accountJSON(_ services: AccountServices, _ account: AccountSummary) throws -> AccountJSON {
        let usedPasskey = try PasskeyStore.hasUsedPasskey(accountID: account.id, on: services.pool)
        return AccountJSON(
            id: account.id.uuidString.lowercased(), email: account.email,
            emailVerified: account.emailVerified,
            displayName: account.displayName,
            hasPassword: account.hasPassword,
            canRemovePassword: account.hasPassword && usedPasskey,
            createdAt: iso8601(account.createdAt),
            signal: CurrentUserDetails(
                rpId: services.rpID, userId: Base64URL.encode(account.userHandle), name: account.email,
                displayName: account.displayName))
    }
}

/// RFC 3339 in UTC, seconds precision: how the API writes times.
func iso8601(_ date: Date) -> String {
    date.formatted(
        .iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
}
