import HTTPServer
import OIDC

/// `GET` and `POST /userinfo` (OpenID Connect Core §5.3): the access token from the request,
/// as a Bearer token (RFC 6750 §2) or with the DPoP scheme and a proof (RFC 9449 §7), the
/// claims from `UserInfoFlow`. A refusal carries the Bearer challenge, or the DPoP one
/// (with the accepted `algs`) when DPoP was used or is needed.
struct UserInfoRoutes: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let routes = self
        router.get("/userinfo") { request, _ in routes.userinfo(request) }
        router.post("/userinfo") { request, _ in routes.userinfo(request) }
    }

    func userinfo(_ request: HTTPRequest) -> HTTPResponse {
        let dpop = DPoPProofs(oauth: oauth)
        var usedDPoP = false
        do {
            if let token = try Self.dpopToken(request) {
                usedDPoP = true
                guard
                    let proof = try dpop.verify(
                        request, uri: oauth.discovery.userinfoEndpoint, accessToken: token, at: .resource)
                else { throw DPoPError.missing.oauthError(at: .resource) }
                var response = try answer(.dpop(token, proof: proof), dpop: true)
                if let nonce = dpop.nextNonce(after: proof) { response.headers.set("DPoP-Nonce", nonce) }
                return response
            }
            guard let token = try Self.presentedToken(request) else { return challenge(nil) }
            return try answer(.bearer(token), dpop: false)
        } catch let error as OAuthError {
            return challenge(error, dpop: usedDPoP)
        } catch {
            oauth.log.error("userinfo.failed", ["reason": OAuthServices.describe(error)])
            return OAuthServices.failure(error).response()
        }
    }

    private func answer(_ presented: PresentedAccessToken, dpop: Bool) throws -> HTTPResponse {
        switch try UserInfoFlow(oauth: oauth).claims(presented: presented) {
        case .claims(let claims): return OAuthServices.json(UserInfoClaims.jsonBody(claims))
        case .refused(let error): return challenge(error, dpop: dpop)
        }
    }

    /// The token of an `Authorization: DPoP` header, if that is how it came.
    static func dpopToken(_ request: HTTPRequest) throws(OAuthError) -> String? {
        guard request.headers.values("Authorization").count <= 1 else {
            throw OAuthError(.invalidRequest, hint: "Send one Authorization header.")
        }
        let body = request.method == .post ? try? OAuthServices.formParameters(request) : nil
        return try BearerToken.extractDPoP(
            authorization: request.headers["Authorization"], body: body, query: Parameters(request.queryItems)
        )
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
    /// a token gets the challenge alone, with an empty JSON object. With DPoP (the scheme was
    /// used, the proof failed, or a bound token came as Bearer), the DPoP challenge of RFC
    /// 9449 §7.1 instead.
    func challenge(_ error: OAuthError?, dpop: Bool = false) -> HTTPResponse {
        var response = error?.response() ?? OAuthServices.json(Array("{}".utf8), status: .unauthorized)
        let dpopError = error.map { [.invalidDPoPProof, .useDPoPNonce].contains($0.code) } ?? false
        if dpop || dpopError || error == UserInfoFlow.boundTokenAsBearer {
            response.headers.set("WWW-Authenticate", DPoPProofs.challenge(realm: oauth.issuer, error: error))
        } else {
            response.headers.set("WWW-Authenticate", BearerToken.challenge(realm: oauth.issuer, error: error))
        }
        return response
    }
}
