import Foundation
import OIDC

/// Token introspection (RFC 7662 §2): a token is active only for the client it was issued
/// to; anything else, unknown or not, is `inactive` with no detail (§2.2, §4).
struct IntrospectionFlow {
    let oauth: OAuthServices
    let store: any IntrospectionStore

    func introspect(_ request: IntrospectionRequest, client: OAuthClient) throws -> IntrospectionResponse {
        // 1. An access token: a JWT this server signed, not expired, this client's, not revoked.
        if let claims = try? AccessTokenClaims.verify(
            request.token, verifier: try oauth.verifier(), issuer: oauth.issuer, audience: oauth.issuer,
            now: oauth.system.now(), leeway: 0)
        {
            guard claims.clientID == client.clientID, try store.accessTokenIsLive(jti: claims.jwtID) else {
                return .inactive
            }
            return .active(
                .init(
                    scope: claims.scope, clientID: claims.clientID, tokenType: "Bearer",
                    expiresAt: claims.expiresAt, issuedAt: claims.issuedAt, subject: claims.subject,
                    audience: [claims.audience], issuer: oauth.issuer, jwtID: claims.jwtID))
        }
        // 2. Otherwise a refresh token: live, and this client's.
        guard let refresh = try store.refreshTokenInfo(request.token), refresh.live,
            refresh.grant.clientID == client.clientID
        else { return .inactive }
        return .active(
            .init(
                scope: refresh.grant.scopes, clientID: refresh.grant.clientID, tokenType: "refresh_token",
                expiresAt: refresh.expiresAt, issuedAt: refresh.issuedAt,
                subject: refresh.grant.accountID.lowercased, audience: [client.clientID], issuer: oauth.issuer
            ))
    }
}
