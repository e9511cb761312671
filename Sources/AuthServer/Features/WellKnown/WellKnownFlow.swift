import Foundation
import OIDC

/// The public documents: OpenID provider metadata, the signing keys, the app association
/// files and the WebAuthn related origins.
struct WellKnownFlow: Sendable {
    let configuration: Configuration
    let signingKeys: SigningKeyRing
    /// The app association files follow the current clients when set.
    var clients: ReloadableClients?
    var system: TimeAndRandomness

    /// `/.well-known/openid-configuration`, with the signing algorithms that have a key now.
    func discovery() throws -> [UInt8] {
        let now = system.now()
        let available = Set(try signingKeys.keys().filter { $0.isSigning(at: now) }.map(\.algorithm.rawValue))
        return JSONBody.encode(
            DiscoveryDocument(
                issuer: configuration.issuer,
                requirePushedAuthorizationRequests: configuration.oauth.requirePushedAuthorizationRequests
            ).json(signingAlgorithmsWithKeys: available))
    }

    /// `/jwks`: every published public key.
    func jwks() throws -> JWKS { try signingKeys.publishedJWKS() }

    func appleAppSiteAssociation() -> [UInt8] {
        JSONBody.encode(NativeAppAssociation.appleAppSiteAssociation(currentConfiguration))
    }

    func assetLinks() -> [UInt8] {
        JSONBody.encode(NativeAppAssociation.assetLinks(currentConfiguration))
    }

    /// `/.well-known/webauthn`: the origins besides this one that may use its passkeys.
    func webAuthnRelatedOrigins() -> [UInt8] {
        JSONBody.encode(["origins": .array(configuration.webAuthn.relatedOrigins.map(JSONValue.string))])
    }

    private var currentConfiguration: Configuration { clients?.current.configuration ?? configuration }
}
