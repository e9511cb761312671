import Foundation
import HTTPServer
import OIDC

/// `/.well-known/…` and `/jwks` (see `WellKnownFlow`). All are public and cacheable for a
/// short time; the keys for five minutes, far shorter than a rotation's pre-publication period.
struct WellKnownRoutes: Sendable {
    let flow: WellKnownFlow

    init(
        configuration: Configuration, signingKeys: SigningKeyRing, clients: ReloadableClients? = nil,
        system: TimeAndRandomness = .live
    ) {
        flow = WellKnownFlow(
            configuration: configuration, signingKeys: signingKeys, clients: clients, system: system)
    }

    func register(on router: Router) {
        let flow = flow
        let related = flow.webAuthnRelatedOrigins()
        router.get("/.well-known/openid-configuration") { _, _ in Self.json(try flow.discovery()) }
        router.get("/.well-known/oauth-authorization-server") { _, _ in Self.json(try flow.discovery()) }
        router.get("/.well-known/apple-app-site-association") { _, _ in
            Self.json(flow.appleAppSiteAssociation())
        }
        router.get("/.well-known/assetlinks.json") { _, _ in Self.json(flow.assetLinks()) }
        router.get("/.well-known/webauthn") { _, _ in Self.json(related) }
        router.get("/jwks") { _, _ in
            var response = try HTTPResponse.json(try flow.jwks())
            response.headers.set("Content-Type", "application/jwk-set+json")
            response.headers.set("Cache-Control", "public, max-age=300")
            return response
        }
    }

    static func json(_ body: [UInt8]) -> HTTPResponse {
        var response = HTTPResponse(status: .ok, body: body)
        response.headers.set("Content-Type", "application/json")
        response.headers.set("Cache-Control", "public, max-age=300")
        response.headers.set("Access-Control-Allow-Origin", "*")
        return response
    }
}
