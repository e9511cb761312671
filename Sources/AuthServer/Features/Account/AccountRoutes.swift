import Crypto
import Foundation
import HTTPServer

/// The signed-in account's profile, password and sessions, as JSON. Every call needs the
/// session cookie; state-changing ones also the CSRF token. See docs/api.md.
struct AccountRoutes: Sendable {
    let services: AccountServices

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
        var givenName: String?
        var familyName: String?
        var preferredUsername: String?
        var locale: String?
        var picture: String?
        var profileUpdatedAt: String

        enum CodingKeys: String, CodingKey {
            case id
            case email
            case emailVerified = "email_verified"
            case displayName = "display_name"
            case hasPassword = "has_password"
            case canRemovePassword = "can_remove_password"
            case createdAt = "created_at"
            case signal
            case givenName = "given_name"
            case familyName = "family_name"
            case preferredUsername = "preferred_username"
            case locale
            case picture
            case profileUpdatedAt = "profile_updated_at"
        }

        /// Unset profile fields are written as null, so every key is always there.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(email, forKey: .email)
            try container.encode(emailVerified, forKey: .emailVerified)
            try container.encode(displayName, forKey: .displayName)
            try container.encode(hasPassword, forKey: .hasPassword)
            try container.encode(canRemovePassword, forKey: .canRemovePassword)
            try container.encode(createdAt, forKey: .createdAt)
            try container.encode(signal, forKey: .signal)
            try container.encode(givenName, forKey: .givenName)
            try container.encode(familyName, forKey: .familyName)
            try container.encode(preferredUsername, forKey: .preferredUsername)
            try container.encode(locale, forKey: .locale)
            try container.encode(picture, forKey: .picture)
            try container.encode(profileUpdatedAt, forKey: .profileUpdatedAt)
        }
    }

    /// `PATCH /api/account`: a member that is absent leaves its value as it is; for the
    /// profile fields, `""` or null removes the value.
    struct ProfileRequest: Decodable {
        var change = ProfileChange()
        /// The first member that is not a string (nor null, for a profile field): refused
        /// with the error that names it rather than as a malformed body.
        var wrongType: APIError?

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            let nameKey = Key(stringValue: "display_name")
            if container.contains(nameKey) {
                change.displayName = try? container.decode(String.self, forKey: nameKey)
                if change.displayName == nil { wrongType = .invalidDisplayName }
            }
            for field in ProfileFields.Field.allCases {
                let key = Key(stringValue: field.rawValue)
                guard container.contains(key) else { continue }
                if try container.decodeNil(forKey: key) {
                    change.fields[field] = .some(nil)
                } else if let text = try? container.decode(String.self, forKey: key) {
                    change.fields[field] = .some(text)
                } else if wrongType == nil {
                    wrongType = .invalidProfileField(field)
                }
            }
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

    private var flow: AccountFlow {
        AccountFlow(
            services: services,
            store: PostgresAccountFlowStore(db: services.pool, sessions: services.sessions))
    }

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        api.add(.get, "/api/account", step: "account.get", profile)
        api.add(.patch, "/api/account", step: "account.update", updateProfile)
        api.add(.post, "/api/password", step: "password.change", changePassword)
        api.add(.delete, "/api/password", step: "password.remove", removePassword)
        api.add(.get, "/api/sessions", step: "sessions.list", sessions)
        api.add(.delete, "/api/sessions/:id", step: "sessions.revoke", endSession)
    }

    func profile(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        return try JSONAPI.json(accountJSON(try flow.profile(session: session)))
    }

    func updateProfile(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let body = try JSONAPI.decode(ProfileRequest.self, request)
        if let wrongType = body.wrongType { throw wrongType }
        return try JSONAPI.json(
            accountJSON(try flow.updateProfile(session: session, change: body.change)))
    }

    func changePassword(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireRecentSession(request)
        let body = try JSONAPI.decode(PasswordChangeRequest.self, request)
        try flow.changePassword(
            session: session, current: body.currentPassword, new: body.newPassword, request: request)
        return HTTPResponse(status: .noContent)
    }

    func removePassword(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireRecentSession(request)
        try flow.removePassword(session: session, request: request)
        return HTTPResponse(status: .noContent)
    }

    func sessions(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let list = try flow.sessions(session: session).map {
            SessionJSON(
                id: $0.id.lowercased, current: $0.id == session.id, createdAt: iso8601($0.createdAt),
                lastSeenAt: iso8601($0.lastSeenAt), amr: $0.amr, userAgent: $0.userAgent)
        }
        return try JSONAPI.json(SessionList(sessions: list))
    }

    func endSession(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let id = try JSONAPI.uuid(context.pathParameters["id"])
        var response = HTTPResponse(status: .noContent)
        if try flow.endSession(session: session, id: id) == .current {
            response.setCookie(services.cookies.expiredSession())
        }
        return response
    }

    private func accountJSON(_ profile: AccountFlow.Profile) -> AccountJSON {
        let account = profile.account
        return AccountJSON(
            id: account.id.lowercased, email: account.email, emailVerified: account.emailVerified,
            displayName: account.displayName, hasPassword: account.hasPassword,
            canRemovePassword: profile.canRemovePassword, createdAt: iso8601(account.createdAt),
            signal: CurrentUserDetails(
                rpId: services.rpID, userId: Base64URL.encode(account.userHandle), name: account.email,
                displayName: account.displayName),
            givenName: account.profile.givenName, familyName: account.profile.familyName,
            preferredUsername: account.profile.preferredUsername, locale: account.profile.locale,
            picture: account.profile.picture, profileUpdatedAt: iso8601(account.profileUpdatedAt))
    }
}

/// RFC 3339 in UTC, seconds precision: how the API writes times.
func iso8601(_ date: Date) -> String {
    date.formatted(
        .iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
}
