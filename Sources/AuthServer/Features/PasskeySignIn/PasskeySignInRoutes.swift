import Foundation
import HTTPServer

/// Passkey sign-in as JSON: `POST /api/passkeys/authentication/start` and `…/finish`
/// (see docs/api.md).
struct PasskeySignInRoutes: Sendable {
    let services: AccountServices

    func register(on router: Router) {
        let routes = self
        let api = JSONAPI(router: router, services: services)
        api.add(.post, "/api/passkeys/authentication/start") { _, _ throws(APIError) in try routes.start() }
        api.add(.post, "/api/passkeys/authentication/finish") { request, _ throws(APIError) in
            try routes.finish(request)
        }
    }

    private var flow: PasskeySignInFlow { PasskeySignInFlow(services: services) }

    func start() throws(APIError) -> HTTPResponse {
        let started = try flow.start()
        return try JSONAPI.json(
            PasskeyChallengeResponse(challengeID: started.challengeID.lowercased, options: started.options))
    }

    func finish(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(PasskeyAssertionFinishRequest.self, request)
        let signedIn = try flow.finish(
            challengeID: try JSONAPI.uuid(body.challengeID), credential: body.credential, request: request)
        var response = try JSONAPI.json(
            SignedInResponse(
                accountID: signedIn.accountID, session: signedIn.session,
                redirectTo: ReturnTo.sanitize(body.returnTo) ?? ReturnTo.fallback))
        response.setCookie(signedIn.cookie)
        response.setCookie(
            try services.guarded("signin.accounts") {
                try services.sessions.accountsCookie(afterSignInOf: signedIn.accountID, request)
            })
        return response
    }
}
