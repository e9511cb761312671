import HTTPServer
import OIDC

/// `POST /authorize-challenge` (draft-ietf-oauth-first-party-apps §4.1): authenticate the
/// client as `/token` does (a public client names itself with `client_id`), run the step
/// (`AuthorizationChallengeFlow`), answer in JSON with `Cache-Control: no-store`.
struct AuthorizationChallengeRoutes: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let routes = self
        OAuthEndpoints(router: router, log: oauth.log).post("/authorize-challenge") { request in
            try routes.challenge(request)
        }
    }

    func challenge(_ request: HTTPRequest) throws -> HTTPResponse {
        let parameters = try OAuthServices.formParameters(request)
        let client = try ClientAuthenticator(oauth: oauth).authenticate(request, parameters: parameters)
            .client
        // RFC 9449 §10 and the draft's §9.6.1: a DPoP proof binds the sign-in and its code to
        // the app's key.
        let proof = try DPoPProofs(oauth: oauth).verifyOnce(
            request, uri: oauth.discovery.authorizationChallengeEndpoint)
        do {
            switch try AuthorizationChallengeFlow(oauth: oauth).handle(
                parameters, client: client, request: request, dpop: proof)
            {
            case .code(let code):
                return OAuthServices.json(JSONBody.encode(["authorization_code": .string(code)]))
            case .answer(let answer):
                return answer.response()
            }
        } catch let answer as ChallengeAnswer {
            return answer.response()
        }
    }
}
