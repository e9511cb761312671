import HTTPServer
import OIDC

/// `GET` and `POST /userinfo` (OpenID Connect Core §5.3): the Bearer token from the request
/// (RFC 6750 §2), the claims from `UserInfoFlow`. A refusal carries the Bearer challenge.
struct UserInfoRoutes: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let routes = self
        router.get("/userinfo") { request, _ in routes.userinfo(request) }
        router.post("/userinfo") { request, _ in routes.userinfo(request) }
    }

    func userinfo(_ request: HTTPRequest) -> HTTPResponse {
        do {
            guard let token = try Self.presentedToken(request) else { return challenge(nil) }
            switch try UserInfoFlow(oauth: oauth).claims(accessToken: token) {
            case .claims(let claims): return OAuthServices.json(UserInfoClaims.jsonBody(claims))
            case .refused(let error): return challenge(error)
            }
        } catch let error as OAuthError {
            return challenge(error)
        } catch {
            oauth.log.error("userinfo.failed", ["reason": OAuthServices.describe(error)])
            return OAuthServices.failure(error).response()
        }
    }

    /// The access token, from the one Authorization header, a form body or the query; nil
    /// when the request carries none. Two Authorization headers are two credentials: which
    /// one counts is ambiguous.
    static func presentedToken(_ request: HTTPRequest) throws(OAuthError) -> String? {
        guard request.headers.values("Authorization").count <= 1 else {
            throw OAuthError(.invalidRequest, hint: "Send one Authorization header.")
        }
        let body = request.method == .post ? try? OAuthServices.formParameters(request) : nil
        return try BearerToken.extract(
            authorization: request.headers["Authorization"], method: request.method.rawValue,
            contentType: request.headers["Content-Type"], body: body, query: Parameters(request.queryItems))
    }

    /// RFC 6750 §3: the error with a `WWW-Authenticate: Bearer` challenge; a request without
    /// a token gets the challenge alone, with an empty JSON object.
    func challenge(_ error: OAuthError?) -> HTTPResponse {
        var response = error?.response() ?? OAuthServices.json(Array("{}".utf8), status: .unauthorized)
        response.headers.set("WWW-Authenticate", BearerToken.challenge(realm: oauth.issuer, error: error))
        return response
    }
}
