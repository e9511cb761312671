import HTTPServer
import OIDC

/// `GET /jwks`: the public signing keys (RFC 7517), cacheable for five minutes, which is
/// far shorter than a rotation's pre-publication period.
struct JWKSEndpoint: Sendable {
    static let path = "/jwks"
    let keys: SigningKeyRing

    func register(on router: Router) {
        router.get(Self.path) { [keys] _, _ in
            var response = try HTTPResponse.json(try keys.publishedJWKS())
            response.headers.set("Content-Type", "application/jwk-set+json")
            response.headers.set("Cache-Control", "public, max-age=300")
            return response
        }
    }
}
