import HTTPServer
import OIDC

/// `POST /revoke` (RFC 7009): an authenticated client revokes a token it holds
/// (`RevocationFlow`). The answer is 200 whether or not there was anything to revoke.
struct RevocationRoutes: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let routes = self
        OAuthEndpoints(router: router, log: oauth.log).post("/revoke") { request in
            try routes.revoke(request)
        }
    }

    func revoke(_ request: HTTPRequest) throws -> HTTPResponse {
        let parameters = try OAuthServices.formParameters(request)
        let client = try ClientAuthenticator(oauth: oauth).authenticate(request, parameters: parameters)
            .client
        let revocation = try RevocationRequest.parse(parameters)
        // A DPoP proof, when sent, must be valid for this endpoint (RFC 9449 §4.3).
        let proof = try DPoPProofs(oauth: oauth).verify(
            request, uri: oauth.discovery.revocationEndpoint, at: .authorizationServer)
        try RevocationFlow(oauth: oauth).revoke(revocation, client: client, dpop: proof)
        var response = HTTPResponse(status: .ok)
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
