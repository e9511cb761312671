import Foundation
import HTTPServer
import OIDC

/// `/userinfo` (OpenID Connect Core §5.3), `/revoke` (RFC 7009) and `/introspect`
/// (RFC 7662).
struct ResourceEndpoints: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let endpoints = self
        router.get("/userinfo") { request, _ in endpoints.userinfo(request) }
        router.post("/userinfo") { request, _ in endpoints.userinfo(request) }
        router.post("/revoke") { request, _ in
            endpoints.oauth.protocolEndpoint("revoke") { try endpoints.revoke(request) }
        }
        router.post("/introspect") { request, _ in
            endpoints.oauth.protocolEndpoint("introspect") { try endpoints.introspect(request) }
        }
    }

    // MARK: - userinfo

    func userinfo(_ request: HTTPRequest) -> HTTPResponse {
        let realm = oauth.issuer
        func refuse(_ error: OAuthError?) -> HTTPResponse {
            var response =
                error.map(OAuthServices.jsonError)
                ?? OAuthServices.json(Array("{}".utf8), status: .unauthorized)
            if error == nil { response.status = .unauthorized }
            response.headers.set("WWW-Authenticate", BearerToken.challenge(realm: realm, error: error))
            return response
        }
        do {
            // Two Authorization headers are two credentials: which one counts is ambiguous.
            guard request.headers.values("Authorization").count <= 1 else {
                return refuse(OAuthError(.invalidRequest, hint: "Send one Authorization header."))
            }
            let body = request.method == .post ? try? OAuthServices.formParameters(request) : nil
            let token = try BearerToken.extract(
                authorization: request.headers["Authorization"], method: request.method.rawValue,
                contentType: request.headers["Content-Type"], body: body,
                query: Parameters(request.queryItems))
            guard let token else { return refuse(nil) }
            let claims: AccessTokenClaims
            do {
                claims = try AccessTokenClaims.verify(
                    token, verifier: try oauth.verifier(), issuer: oauth.issuer, audience: oauth.issuer,
                    now: Date(), leeway: 0)
            } catch let error as JOSEError {
                return refuse(BearerToken.invalidToken(debug: "\(error)"))
            }
            guard try OAuthStore.accessTokenIsLive(jti: claims.jwtID, on: oauth.pool) else {
                return refuse(BearerToken.invalidToken("The token was revoked."))
            }
            guard claims.scope.contains(Scopes.openid), let accountID = UUID(uuidString: claims.subject)
            else {
                return refuse(BearerToken.insufficientScope("The 'openid' scope is required."))
            }
            let available = try oauth.userClaims(accountID: accountID)
            guard !available.isEmpty else {
                return refuse(BearerToken.invalidToken("The account no longer exists."))
            }
            let selected = UserInfoClaims.select(
                subject: claims.subject, available: available, scopes: claims.scope)
            return OAuthServices.json(UserInfoClaims.jsonBody(selected))
        } catch let error as OAuthError {
            return refuse(error)
        } catch {
            oauth.log.error("userinfo.failed", ["reason": OAuthServices.describe(error)])
            return OAuthServices.jsonError(OAuthServices.failure(error))
        }
    }

    // MARK: - revoke

    func revoke(_ request: HTTPRequest) throws -> HTTPResponse {
        let parameters = try OAuthServices.formParameters(request)
        let client = try ClientAuthenticator(oauth: oauth).authenticate(request, parameters: parameters)
            .client
        let revocation = try RevocationRequest.parse(parameters)
        // Access tokens are JWTs: a token that verifies names its jti; anything else is
        // looked up as a refresh token (RFC 7009 §2.1: the hint is only a hint).
        if let access = try accessToken(revocation.token) {
            if access.clientID == client.clientID {
                try OAuthStore.revokeAccessToken(jti: access.jti, clientID: client.clientID, on: oauth.pool)
            }
        } else if let refresh = try OAuthStore.refreshTokenInfo(revocation.token, on: oauth.pool),
            refresh.grant.clientID == client.clientID
        {
            try OAuthStore.revokeFamily(refresh.grant.familyID, reason: "revoked_by_client", on: oauth.pool)
        }
        var response = HTTPResponse(status: .ok)
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// The `jti` and `client_id` of an access token this server signed (even if expired).
    private func accessToken(_ token: String) throws -> (jti: String, clientID: String)? {
        guard token.split(separator: ".", omittingEmptySubsequences: false).count == 3,
            let verified = try? oauth.verifier().verify(token, expectedType: "at+jwt"),
            let payload = try? verified.decodePayload(as: [String: ClaimValue].self),
            let jti = payload["jti"]?.stringValue, let clientID = payload["client_id"]?.stringValue
        else { return nil }
        return (jti, clientID)
    }

    // MARK: - introspect

    func introspect(_ request: HTTPRequest) throws -> HTTPResponse {
        let parameters = try OAuthServices.formParameters(request)
        let authenticated = try ClientAuthenticator(oauth: oauth).authenticate(
            request, parameters: parameters)
        guard authenticated.method != .none else {
            throw OAuthError(.invalidClient, hint: "Introspection is only for clients that authenticate.")
        }
        let client = authenticated.client
        let introspection = try IntrospectionRequest.parse(parameters)
        var answer = IntrospectionResponse.inactive
        if let claims = try? AccessTokenClaims.verify(
            introspection.token, verifier: try oauth.verifier(), issuer: oauth.issuer, audience: oauth.issuer,
            now: Date(),
            leeway: 0)
        {
            if claims.clientID == client.clientID,
                try OAuthStore.accessTokenIsLive(jti: claims.jwtID, on: oauth.pool)
            {
                answer = .active(
                    .init(
                        scope: claims.scope, clientID: claims.clientID, tokenType: "Bearer",
                        expiresAt: claims.expiresAt,
                        issuedAt: claims.issuedAt, subject: claims.subject, audience: [claims.audience],
                        issuer: oauth.issuer,
                        jwtID: claims.jwtID))
            }
        } else if let refresh = try OAuthStore.refreshTokenInfo(introspection.token, on: oauth.pool),
            refresh.live,
            refresh.grant.clientID == client.clientID
        {
            answer = .active(
                .init(
                    scope: refresh.grant.scopes, clientID: refresh.grant.clientID, tokenType: "refresh_token",
                    expiresAt: refresh.expiresAt, issuedAt: refresh.issuedAt,
                    subject: refresh.grant.accountID.uuidString.lowercased(), audience: [client.clientID],
                    issuer: oauth.issuer))
        }
        return OAuthServices.json(answer.jsonBody)
    }
}
