import HTTPServer
import OIDC

/// `POST /introspect` (RFC 7662): an authenticated client asks whether a token it holds
/// is active, or a resource server whether a token presented to its API is; the answer
/// comes from `IntrospectionFlow`.
struct IntrospectionRoutes: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let routes = self
        OAuthEndpoints(router: router, log: oauth.log).post("/introspect") { request in
            try routes.introspect(request)
        }
    }

    func introspect(_ request: HTTPRequest) throws -> HTTPResponse {
        let parameters = try OAuthServices.formParameters(request)
        // A DPoP proof, when sent, must be valid for this endpoint (RFC 9449 §4.3).
        let proof = try DPoPProofs(oauth: oauth).verify(
            request, uri: oauth.discovery.introspectionEndpoint, at: .authorizationServer)
        // A resource server, with the credentials configured for its API (RFC 7662 §2.1).
        let presented = try ClientAuthentication.extract(
            authorization: request.headers["Authorization"], parameters: parameters)
        if let api = try ResourceServerAuthentication.authenticate(presented, catalog: oauth.resources) {
            try IntrospectionFlow(oauth: oauth).accept(proof)
            let answer = try IntrospectionFlow(oauth: oauth).introspect(
                try IntrospectionRequest.parse(parameters), resourceServer: api)
            return try respond(answer, to: request, caller: api.introspection?.clientID ?? "")
        }
        let authenticated = try ClientAuthenticator(oauth: oauth).authenticate(
            request, parameters: parameters)
        let introspection = try IntrospectionRequest.parse(parameters, from: authenticated)
        try IntrospectionFlow(oauth: oauth).accept(proof)
        let answer = try IntrospectionFlow(oauth: oauth).introspect(
            introspection, client: authenticated.client)
        return try respond(answer, to: request, caller: authenticated.client.clientID)
    }

    /// JSON (RFC 7662 §2.2), or the signed JWT when `Accept` asks for it (RFC 9701 §5).
    private func respond(_ answer: IntrospectionResponse, to request: HTTPRequest, caller: String) throws
        -> HTTPResponse
    {
        guard IntrospectionResponse.wantsJWT(accept: request.headers["Accept"]) else {
            return OAuthServices.json(answer.jsonBody)
        }
        let jwt = try answer.signed(
            issuer: oauth.issuer, audience: caller, issuedAt: oauth.system.now(),
            signer: try oauth.serverSigner())
        var response = OAuthServices.json(Array(jwt.utf8))
        response.headers.set("Content-Type", IntrospectionResponse.jwtMediaType)
        return response
    }
}
