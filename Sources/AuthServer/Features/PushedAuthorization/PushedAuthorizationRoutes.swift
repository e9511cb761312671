import HTTPServer
import OIDC

/// `POST /par` (RFC 9126 §2): an authenticated client pushes its authorization request and gets
/// a `request_uri` for /authorize (`PushedAuthorizationFlow`). Answers in JSON, `no-store`.
struct PushedAuthorizationRoutes: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let routes = self
        OAuthEndpoints(router: router, log: oauth.log).post("/par") { request in
            try routes.push(request)
        }
    }

    func push(_ request: HTTPRequest) throws -> HTTPResponse {
        let parameters = try OAuthServices.formParameters(request)
        // §2.1: the client authenticates exactly as at the token endpoint (public clients with
        // their client_id).
        let client = try ClientAuthenticator(oauth: oauth).authenticate(request, parameters: parameters)
            .client
        // RFC 9449 §10.1: a DPoP proof sent with the push binds the code to its key.
        let dpop = DPoPProofs(oauth: oauth)
        let proof = try dpop.verifyOnce(
            request, uri: oauth.discovery.pushedAuthorizationRequestEndpoint, client: client)
        let pushed = try PushedAuthorizationFlow(
            oauth: oauth, store: PostgresPushedAuthorizationStore(db: oauth.pool)
        ).push(parameters, client: client, dpop: proof)
        var answer = OAuthServices.json(
            JSONBody.encode([
                "request_uri": .string(pushed.requestURI), "expires_in": .int(pushed.expiresIn),
            ]), status: .created)
        if let nonce = dpop.nextNonce(after: proof) { answer.headers.set("DPoP-Nonce", nonce) }
        return answer
    }
}
