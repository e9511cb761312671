import Foundation
import HTTPServer
import OIDC

/// `/.well-known/…`: OpenID provider metadata, the app association files and the WebAuthn
/// related origins. All are public and cacheable for a short time.
struct WellKnownRoutes: Sendable {
    let configuration: Configuration
    let signingKeys: SigningKeyRing
    /// The app association files follow the current clients when set.
    var clients: ReloadableClients? = nil

    func register(on router: Router) {
        let document = DiscoveryDocument(issuer: configuration.issuer).json
        let signingKeys = signingKeys
        let configuration = configuration
        let clients = clients
        let current: @Sendable () -> Configuration = { clients?.current.configuration ?? configuration }
        let related = JSONBody.encode([
            "origins": .array(configuration.webAuthn.relatedOrigins.map(ClaimValue.string))
        ])

        // ID tokens can only be signed with algorithms that have a signing key right now.
        let discovery: @Sendable () throws -> HTTPResponse = {
            let now = Date()
            let available = Set(
                try signingKeys.keys().filter { $0.isSigning(at: now) }.map(\.algorithm.rawValue))
            var members = document
            members["id_token_signing_alg_values_supported"] = .array(
                DiscoveryDocument.signingAlgorithms.filter(available.contains).map(ClaimValue.string))
            return Self.json(JSONBody.encode(members))
        }
        router.get("/.well-known/openid-configuration") { _, _ in try discovery() }
        router.get("/.well-known/oauth-authorization-server") { _, _ in try discovery() }
        router.get("/.well-known/apple-app-site-association") { _, _ in
            Self.json(JSONBody.encode(NativeAppAssociation.appleAppSiteAssociation(current())))
        }
        router.get("/.well-known/assetlinks.json") { _, _ in
            Self.json(JSONBody.encode(NativeAppAssociation.assetLinks(current())))
        }
        router.get("/.well-known/webauthn") { _, _ in Self.json(related) }
    }

    static func json(_ body: [UInt8]) -> HTTPResponse {
        var response = HTTPResponse(status: .ok, body: body)
        response.headers.set("Content-Type", "application/json")
        response.headers.set("Cache-Control", "public, max-age=300")
        response.headers.set("Access-Control-Allow-Origin", "*")
        return response
    }
}

/// The JSON value of token claims and response bodies (the configuration's own `JSONValue`
/// is a different, read-only type).
typealias ClaimValue = OIDC.JSONValue
