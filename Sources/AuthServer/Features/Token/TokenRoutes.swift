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
        let response = try TokenFlow(oauth: oauth).exchange(
            grant, client: client, clientAddress: request.remoteAddress,
            resources: parameters.values("resource"))
        return OAuthServices.json(response.jsonBody)
    }
}
