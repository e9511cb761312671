import Foundation
import HTTPServer
import OIDC

/// `POST /upstream/apple/notifications`: Sign in with Apple's server-to-server notifications
/// (the endpoint registered with Apple for the Services ID). Apple sends
/// `{"payload": "<JWS>"}` and expects a quick 200; a notification that does not verify is a
/// 400 with an OAuth-style JSON body and changes nothing; one seen before is a 200 without
/// action.
struct AppleNotificationsRoutes: Sendable {
    let oauth: OAuthServices

    static let path = "/upstream/apple/notifications"

    func register(on router: Router) {
        let routes = self
        OAuthEndpoints(router: router, log: oauth.log).post(Self.path) { request in
            try routes.receive(request)
        }
    }

    func receive(_ request: HTTPRequest) throws -> HTTPResponse {
        guard
            let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let payload = object["payload"] as? String, !payload.isEmpty
        else {
            throw OAuthError(.invalidRequest, hint: "The body must be JSON with a 'payload' string.")
        }
        let outcome = try AppleNotificationsFlow(oauth: oauth).receive(payload)
        var response = OAuthServices.json(JSONBody.encode(["status": outcome.rawValue]))
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
