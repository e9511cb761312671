import Foundation
import HTTPServer

/// Re-authentication in a signed-in session, as JSON: the current password, or a passkey of
/// the account. Every call needs the session cookie and the CSRF token. See docs/api.md.
struct ReauthenticationRoutes: Sendable {
    let services: AccountServices

    struct PasswordRequest: Decodable {
        var password: String
    }

    private var flow: ReauthenticationFlow {
        ReauthenticationFlow(services: services, store: PostgresReauthenticationStore(db: services.pool))
    }

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        api.add(.post, "/api/reauthenticate/password", step: "reauthenticate.password", password)
        api.add(
            .post, "/api/reauthenticate/passkey/start", step: "reauthenticate.passkey.start", passkeyStart)
        api.add(
            .post, "/api/reauthenticate/passkey/finish", step: "reauthenticate.passkey.finish", passkeyFinish)
    }

    func password(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let body = try JSONAPI.decode(PasswordRequest.self, request)
        try flow.password(session: session, password: body.password, request: request)
        return HTTPResponse(status: .noContent)
    }

    func passkeyStart(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let started = try flow.passkeyStart(session: session)
        return try JSONAPI.json(
            PasskeyChallengeResponse(
                challengeID: started.challengeID.lowercased, options: started.options))
    }

    func passkeyFinish(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let body = try JSONAPI.decode(PasskeyAssertionFinishRequest.self, request)
        let challengeID = try JSONAPI.uuid(body.challengeID)
        try flow.passkeyFinish(
            session: session, challengeID: challengeID, credential: body.credential, request: request)
        return HTTPResponse(status: .noContent)
    }
}
