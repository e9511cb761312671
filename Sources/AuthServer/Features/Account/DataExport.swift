import Crypto
import Foundation
import HTTPServer

/// The account holder's copy of their data (GDPR Art. 15 and 20): one JSON document with the
/// profile, addresses, passkeys, linked sign-in providers, connected apps, live sessions and
/// recent security events. Only what describes the person and their use: never a secret, a
/// digest, a password hash or a passkey's public key (metadata only).
struct DataExport {
    /// Audit events in the export: this many days back, at most `maxEvents`.
    static let eventDays = 90
    static let maxEvents = 1_000

    struct Email: Sendable {
        var email: String
        var verifiedAt: Date?
        var addedAt: Date
    }

    struct LinkedIdentity: Sendable {
        var provider: String
        var email: String?
        var createdAt: Date
        var lastUsedAt: Date?
    }

    let services: AccountServices
    let store: any DataExportStore

    /// The document, read in one snapshot.
    func document(session: CurrentSession) throws -> Document {
        let now = services.system.now()
        let since = now.addingTimeInterval(-Double(Self.eventDays) * 86_400)
        return try store.transaction { store in
            guard let account = try store.account(session.accountID) else { throw APIError.notSignedIn }
            let id = account.id
            return Document(
                exportedAt: iso8601(now),
                profile: Document.Profile(
                    id: id.lowercased, displayName: account.displayName, email: account.email,
                    emailVerified: account.emailVerified, hasPassword: account.hasPassword,
                    givenName: account.profile.givenName, familyName: account.profile.familyName,
                    preferredUsername: account.profile.preferredUsername, locale: account.profile.locale,
                    picture: account.profile.picture, createdAt: iso8601(account.createdAt),
                    profileUpdatedAt: iso8601(account.profileUpdatedAt)),
                emailAddresses: try store.emails(accountID: id).map {
                    Document.EmailAddress(
                        email: $0.email, verified: $0.verifiedAt != nil,
                        verifiedAt: $0.verifiedAt.map(iso8601),
                        addedAt: iso8601($0.addedAt))
                },
                passkeys: try store.passkeys(accountID: id).map {
                    Document.Passkey(
                        name: $0.name, createdAt: iso8601($0.createdAt),
                        lastUsedAt: $0.lastUsedAt.map(iso8601),
                        backupEligible: $0.backupEligible, backedUp: $0.backedUp, transports: $0.transports,
                        aaguid: Self.aaguid($0.aaguid), provider: PasskeyProviders.name(forAAGUID: $0.aaguid))
                },
                linkedIdentities: try store.linkedIdentities(accountID: id).map {
                    Document.Linked(
                        provider: $0.provider, providerName: providerName($0.provider), email: $0.email,
                        createdAt: iso8601($0.createdAt), lastUsedAt: $0.lastUsedAt.map(iso8601))
                },
                connectedApps: try store.consents(accountID: id).map {
                    Document.App(
                        clientID: $0.clientID, name: clientName($0.clientID), scopes: $0.scopes,
                        grantedAt: iso8601($0.grantedAt))
                },
                sessions: try store.sessions(accountID: id).map {
                    Document.Session(
                        createdAt: iso8601($0.createdAt), lastSeenAt: iso8601($0.lastSeenAt), amr: $0.amr,
                        device: UserAgentSummary.describe($0.userAgent), userAgent: $0.userAgent,
                        clientAddress: $0.clientAddress, current: $0.id == session.id)
                },
                securityEvents: try store.auditEvents(accountID: id, since: since, limit: Self.maxEvents).map
                {
                    Document.Event(
                        occurredAt: iso8601($0.occurredAt), event: $0.event, actor: $0.actor,
                        clientID: $0.clientID, clientAddress: $0.clientAddress,
                        // Another account's id (the one that took an address from this one) is
                        // that person's, not this one's; the operator's audit keeps it.
                        detail: $0.detail.filter { $0.key != "verified_by" })
                })
        }
    }

    /// The provider's button label ("Apple", "Google"), or its id once it is no longer configured.
    private func providerName(_ id: String) -> String {
        services.configuration.upstreamProviders.first { $0.id == id }?.label ?? id
    }

    private func clientName(_ clientID: String) -> String {
        services.clients?.current.registry.metadata[clientID]?.clientName ?? clientID
    }

    /// The AAGUID in its usual 8-4-4-4-12 form; nil for the all-zero AAGUID (none given).
    static func aaguid(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 16, bytes.contains(where: { $0 != 0 }) else { return nil }
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        var parts: [Substring] = []
        var index = hex.startIndex
        for length in [8, 4, 4, 4, 12] {
            let end = hex.index(index, offsetBy: length)
            parts.append(hex[index..<end])
            index = end
        }
        return parts.joined(separator: "-")
    }

    /// The export as written; keys in snake_case like the rest of the API (docs/api.md).
    struct Document: Encodable {
        var format = "account-export/1"
        var exportedAt: String
        var profile: Profile
        var emailAddresses: [EmailAddress]
        var passkeys: [Passkey]
        var linkedIdentities: [Linked]
        var connectedApps: [App]
        var sessions: [Session]
        var securityEvents: [Event]

        enum CodingKeys: String, CodingKey {
            case format
            case exportedAt = "exported_at"
            case profile
            case emailAddresses = "email_addresses"
            case passkeys
            case linkedIdentities = "linked_identities"
            case connectedApps = "connected_apps"
            case sessions
            case securityEvents = "security_events"
        }

        struct Profile: Encodable {
            var id: String
            var displayName: String
            var email: String
            var emailVerified: Bool
            var hasPassword: Bool
            var givenName: String?
            var familyName: String?
            var preferredUsername: String?
            var locale: String?
            var picture: String?
            var createdAt: String
            var profileUpdatedAt: String

            enum CodingKeys: String, CodingKey {
                case id
                case displayName = "display_name"
                case email
                case emailVerified = "email_verified"
                case hasPassword = "has_password"
                case givenName = "given_name"
                case familyName = "family_name"
                case preferredUsername = "preferred_username"
                case locale, picture
                case createdAt = "created_at"
                case profileUpdatedAt = "profile_updated_at"
            }
        }

        struct EmailAddress: Encodable {
            var email: String
            var verified: Bool
            var verifiedAt: String?
            var addedAt: String

            enum CodingKeys: String, CodingKey {
                case email, verified
                case verifiedAt = "verified_at"
                case addedAt = "added_at"
            }
        }

        struct Passkey: Encodable {
            var name: String
            var createdAt: String
            var lastUsedAt: String?
            var backupEligible: Bool
            var backedUp: Bool
            var transports: [String]
            var aaguid: String?
            var provider: String?

            enum CodingKeys: String, CodingKey {
                case name
                case createdAt = "created_at"
                case lastUsedAt = "last_used_at"
                case backupEligible = "backup_eligible"
                case backedUp = "backed_up"
                case transports, aaguid, provider
            }
        }

        struct Linked: Encodable {
            var provider: String
            var providerName: String
            var email: String?
            var createdAt: String
            var lastUsedAt: String?

            enum CodingKeys: String, CodingKey {
                case provider
                case providerName = "provider_name"
                case email
                case createdAt = "created_at"
                case lastUsedAt = "last_used_at"
            }
        }

        struct App: Encodable {
            var clientID: String
            var name: String
            var scopes: [String]
            var grantedAt: String

            enum CodingKeys: String, CodingKey {
                case clientID = "client_id"
                case name, scopes
                case grantedAt = "granted_at"
            }
        }

        struct Session: Encodable {
            var createdAt: String
            var lastSeenAt: String
            var amr: [String]
            var device: String
            var userAgent: String
            var clientAddress: String
            var current: Bool

            enum CodingKeys: String, CodingKey {
                case createdAt = "created_at"
                case lastSeenAt = "last_seen_at"
                case amr, device
                case userAgent = "user_agent"
                case clientAddress = "client_address"
                case current
            }
        }

        struct Event: Encodable {
            var occurredAt: String
            var event: String
            var actor: String
            var clientID: String?
            var clientAddress: String
            var detail: [String: String]

            enum CodingKeys: String, CodingKey {
                case occurredAt = "occurred_at"
                case event, actor
                case clientID = "client_id"
                case clientAddress = "client_address"
                case detail
            }
        }
    }
}
