import HTTPServer
import OIDC

/// `POST /introspect` (RFC 7662): an authenticated client asks whether a token it holds
/// is active; the answer comes from `IntrospectionFlow`.
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
        let authenticated = try ClientAuthenticator(oauth: oauth).authenticate(
            request, parameters: parameters)
        let introspection = try IntrospectionRequest.parse(parameters, from: authenticated)
        let answer = try IntrospectionFlow(oauth: oauth).introspect(
            introspection, client: authenticated.client)
        return OAuthServices.json(answer.jsonBody)
    }
}
