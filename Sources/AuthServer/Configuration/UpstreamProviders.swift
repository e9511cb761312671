import Crypto
import Foundation
import OIDC

/// An identity provider users may sign in with instead of a password or passkey (`upstream_providers`):
/// Sign in with Apple, or any OpenID Connect provider found by discovery. Its `id` names it in
/// URLs (`/upstream/<id>/…`) and in `upstream_identities.provider`.
struct UpstreamProvider: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case apple(AppleSettings)
        case oidc(OIDCSettings)
    }

    /// Sign in with Apple. Apple's client secret is not a configured string but an ES256 JWT
    /// signed with the developer key (`.p8`) under `keyID`, for `teamID`.
    struct AppleSettings: Sendable, Equatable {
        var teamID: String
        /// The Services ID: the `client_id` of the web flow; nil offers no web button.
        var servicesID: String?
        /// The apps' bundle ids: the `aud` of identity tokens the apps bring to token exchange.
        var bundleIDs: [String]
        var keyID: String
        var privateKey: DeveloperKey
        var endpoints = AppleEndpoints()
    }

    /// Apple's endpoints; other values only with `allow_loopback_for_tests` (a stand-in).
    struct AppleEndpoints: Sendable, Equatable {
        var authorize = "https://appleid.apple.com/auth/authorize"
        var token = "https://appleid.apple.com/auth/token"
        var revoke = "https://appleid.apple.com/auth/revoke"
        var keys = "https://appleid.apple.com/auth/keys"
    }

    /// The `.p8` key, compared by its text.
    struct DeveloperKey: Sendable, Equatable {
        var pem: String
        var key: P256.Signing.PrivateKey
        static func == (a: Self, b: Self) -> Bool { a.pem == b.pem }
    }

    /// A provider whose endpoints come from `<issuer>/.well-known/openid-configuration`.
    struct OIDCSettings: Sendable, Equatable {
        var clientID: String
        /// From `client_secret_file` (sent with client_secret_basic); nil with no `clientKey`: a
        /// public client (PKCE only).
        var clientSecret: String?
        var scopes: [String] = ["openid", "email", "profile"]
        /// From `private_key_file`: authenticates with `private_key_jwt` (OpenID Connect Core §9).
        var clientKey: ClientKey?
    }

    /// This server's key for `private_key_jwt` at a provider (RSA: RS256, P-256: ES256),
    /// compared by its text and key id.
    struct ClientKey: Sendable, Equatable {
        var pem: String
        var keyID: String?
        var key: SigningPrivateKey
        var algorithm: JWSAlgorithm
        static func == (a: Self, b: Self) -> Bool { a.pem == b.pem && a.keyID == b.keyID }
    }

    static let appleIssuer = "https://appleid.apple.com"

    var id: String
    /// The `iss` of its ID tokens (always Apple's for `apple`).
    var issuer: String
    /// The button's name: "Continue with <label>".
    var label: String
    var iconURL: String?
    var kind: Kind
    /// Test-only: its endpoints may be on loopback addresses.
    var allowLoopbackForTests = false
    /// Trusted roots (PEM) for its endpoints; nil: the system's.
    var caFile: String?

    var apple: AppleSettings? {
        if case .apple(let settings) = kind { return settings }
        return nil
    }

    /// How this provider's endpoints are fetched: the SSRF rules of `OutgoingFetch`.
    var fetch: OutgoingFetch { OutgoingFetch(allowLoopback: allowLoopbackForTests, caFile: caFile) }
}

extension Configuration {
    func upstreamProvider(id: String) -> UpstreamProvider? { upstreamProviders.first { $0.id == id } }

    /// The Apple provider, if one is configured (at most one is allowed).
    var appleProvider: UpstreamProvider? { upstreamProviders.first { $0.apple != nil } }
}

/// `upstream_providers`: an array, in the order the buttons appear.
enum UpstreamProvidersReader {
    static func read(_ root: ObjectReader, sink: ProblemSink) -> [UpstreamProvider] {
        guard let value = root.value("upstream_providers") else { return [] }
        guard case .array(let items) = value else {
            root.error("upstream_providers", "must be an array of provider objects, found \(value.typeName)")
            return []
        }
        var providers: [UpstreamProvider] = []
        for (index, item) in items.enumerated() {
            guard let reader = ObjectReader(item, path: "$.upstream_providers[\(index)]", sink: sink) else {
                continue
            }
            let provider = readProvider(reader)
            reader.reportUnknownMembers()
            guard let provider else { continue }
            if providers.contains(where: { $0.id == provider.id }) {
                reader.error("id", "duplicates an earlier provider \"\(provider.id)\"")
            } else if provider.apple != nil, providers.contains(where: { $0.apple != nil }) {
                reader.error("type", "only one apple provider may be configured")
            } else {
                providers.append(provider)
            }
        }
        return providers
    }

    /// Lowercase letters, digits, `-` and `_`: the id is a URL path segment.
    static func isValidID(_ id: String) -> Bool {
        (1...32).contains(id.utf8.count)
            && id.utf8.allSatisfy {
                (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x5F
            }
    }

    /// An image the login pages' Content Security Policy (`img-src 'self' data:`) lets them
    /// show: a path on this server, or a small `data:image/` URL.
    static func isPageImage(_ url: String) -> Bool {
        if url.hasPrefix("/") { return !url.hasPrefix("//") && !url.contains("\\") }
        return url.hasPrefix("data:image/") && url.utf8.count <= 16_384
    }

    private static func readProvider(_ reader: ObjectReader) -> UpstreamProvider? {
        let id = reader.string("id", required: true)
        if let id, !isValidID(id) {
            reader.error("id", "must be 1 to 32 of a-z, 0-9, - and _")
        }
        let type = reader.string("type", required: true)
        let iconURL = reader.string("icon_url")
        if let iconURL, !isPageImage(iconURL) {
            reader.error(
                "icon_url",
                "must be a path on this server (such as /static/img/corp.svg) or a data:image/ URL of at most 16 KiB:"
                    + " the pages' Content Security Policy loads no image from another origin")
        }
        let allowLoopback = reader.bool("allow_loopback_for_tests") ?? false
        let caFile = reader.string("ca_file")
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            reader.error("ca_file", "cannot read \(caFile)")
        }
        let kind: UpstreamProvider.Kind?
        var issuer: String?
        var label = reader.string("label")
        switch type {
        case "apple":
            kind = readApple(reader, allowLoopback: allowLoopback).map { .apple($0) }
            issuer = UpstreamProvider.appleIssuer
            label = label ?? "Apple"
        case "oidc":
            issuer = reader.string("issuer", required: true)
            if let given = issuer, !isIssuer(given) {
                reader.error("issuer", "must be an https URL without query or fragment")
            }
            if label == nil { reader.error("label", "is required for an oidc provider") }
            kind = readOIDC(reader).map { .oidc($0) }
        case nil:
            kind = nil
        case let other?:
            reader.error("type", "must be \"apple\" or \"oidc\", found \"\(other)\"")
            kind = nil
        }
        guard let id, isValidID(id), let kind, let issuer, let label else { return nil }
        return UpstreamProvider(
            id: id, issuer: issuer, label: label, iconURL: iconURL, kind: kind,
            allowLoopbackForTests: allowLoopback, caFile: caFile)
    }

    private static func isIssuer(_ text: String) -> Bool {
        guard let url = URLComponents(string: text), url.scheme == "https", url.host?.isEmpty == false,
            url.query == nil, url.fragment == nil
        else { return false }
        return true
    }

    private static func readApple(_ reader: ObjectReader, allowLoopback: Bool) -> UpstreamProvider
        .AppleSettings?
    {
        let teamID = reader.string("team_id", required: true)
        let servicesID = reader.string("services_id")
        let bundleIDs = reader.strings("bundle_ids") ?? []
        if servicesID == nil && bundleIDs.isEmpty {
            reader.error(
                "services_id", "an apple provider needs a services_id (web), bundle_ids (apps), or both")
        }
        let keyID = reader.string("key_id", required: true)
        var developerKey: UpstreamProvider.DeveloperKey?
        if let file = reader.string("private_key_file", required: true) {
            if let data = FileManager.default.contents(atPath: file),
                let pem = String(data: data, encoding: .utf8)
            {
                if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
                    developerKey = UpstreamProvider.DeveloperKey(pem: pem, key: key)
                } else {
                    reader.error(
                        "private_key_file", "is not a P-256 private key in PEM (the .p8 file Apple gives)")
                }
            } else {
                reader.error("private_key_file", "cannot read \(file)")
            }
        }
        var endpoints = UpstreamProvider.AppleEndpoints()
        if let value = reader.value("endpoints_for_tests") {
            if !allowLoopback {
                reader.error("endpoints_for_tests", "is only allowed with allow_loopback_for_tests")
            } else if let inner = ObjectReader(
                value, path: reader.memberPath("endpoints_for_tests"), sink: reader.sink)
            {
                endpoints.authorize = inner.string("authorize") ?? endpoints.authorize
                endpoints.token = inner.string("token") ?? endpoints.token
                endpoints.revoke = inner.string("revoke") ?? endpoints.revoke
                endpoints.keys = inner.string("keys") ?? endpoints.keys
                inner.reportUnknownMembers()
            }
        }
        guard let teamID, let keyID, let developerKey else { return nil }
        return UpstreamProvider.AppleSettings(
            teamID: teamID, servicesID: servicesID, bundleIDs: bundleIDs, keyID: keyID,
            privateKey: developerKey,
            endpoints: endpoints)
    }

    private static func readOIDC(_ reader: ObjectReader) -> UpstreamProvider.OIDCSettings? {
        let clientID = reader.string("client_id", required: true)
        var secret: String?
        if let file = reader.string("client_secret_file") {
            if let data = FileManager.default.contents(atPath: file),
                let text = String(data: data, encoding: .utf8)?.trimmingCharacters(
                    in: .whitespacesAndNewlines),
                !text.isEmpty
            {
                secret = text
            } else {
                reader.error("client_secret_file", "cannot read a secret from \(file)")
            }
        }
        var scopes = reader.strings("scopes") ?? ["openid", "email", "profile"]
        if !scopes.contains("openid") { scopes.insert("openid", at: 0) }
        var clientKey: UpstreamProvider.ClientKey?
        let keyID = reader.string("key_id")
        if let file = reader.string("private_key_file") {
            if secret != nil {
                reader.error("private_key_file", "use client_secret_file or private_key_file, not both")
            } else if let data = FileManager.default.contents(atPath: file),
                let pem = String(data: data, encoding: .utf8)
            {
                if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
                    clientKey = .init(pem: pem, keyID: keyID, key: .p256(key), algorithm: .ES256)
                } else if let key = try? RSA.Signing.PrivateKey(pemRepresentation: pem) {
                    clientKey = .init(pem: pem, keyID: keyID, key: .rsa(key), algorithm: .RS256)
                } else {
                    reader.error("private_key_file", "is not an RSA or P-256 private key in PEM")
                }
            } else {
                reader.error("private_key_file", "cannot read \(file)")
            }
        } else if keyID != nil {
            reader.error("key_id", "is only used with private_key_file")
        }
        guard let clientID else { return nil }
        return UpstreamProvider.OIDCSettings(
            clientID: clientID, clientSecret: secret, scopes: scopes, clientKey: clientKey)
    }
}
