import HTTPServer
import OIDC

/// `POST /token` (RFC 6749 §3.2): authenticate the client, parse the grant, run it
/// (`TokenFlow`), answer in JSON. Every answer carries `Cache-Control: no-store`.
struct TokenRoutes: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let routes = self
        OAuthEndpoints(router: router, log: oauth.log).post("/token") { request in
            try routes.token(request)
        }
    }

    func token(_ request: HTTPRequest) throws -> HTTPResponse {
        let parameters = try OAuthServices.formParameters(request)
        let client = try ClientAuthenticator(oauth: oauth).authenticate(request, parameters: parameters)
            .client
        let grant = try TokenRequest.parse(parameters)
        // DPoP (RFC 9449 §5): a valid proof binds the tokens to its key; a client that must
        // use DPoP is refused without one.
        let dpop = DPoPProofs(oauth: oauth)
        let proof = try dpop.verify(
            request, uri: oauth.discovery.tokenEndpoint, client: client, at: .authorizationServer)
        if proof == nil,
            DPoPPolicy.required(
                for: client, requiredForPublicClients: oauth.settings.dpopRequiredForPublicClients)
        {
            throw DPoPError.missing.oauthError(
                at: .authorizationServer,
                nonce: oauth.settings.dpopNonceRequired ? dpop.nonces.current(now: oauth.system.now()) : nil)
        }
        let response = try TokenFlow(oauth: oauth).exchange(
            grant, client: client, clientAddress: request.remoteAddress,
            resources: parameters.values("resource"), dpop: proof)
        var answer = OAuthServices.json(response.jsonBody)
        if let nonce = dpop.nextNonce(after: proof) { answer.headers.set("DPoP-Nonce", nonce) }
        return answer
    }
}
