import Foundation
import OIDC

/// Token introspection (RFC 7662 §2): a token is active only for the client it was issued
/// to, or for the API (resource server) it was issued for; anything else, unknown or not, is
/// `inactive` with no detail (§2.2, §4).
struct IntrospectionFlow {
    let oauth: OAuthServices
    let store: any IntrospectionStore

    func introspect(_ request: IntrospectionRequest, client: OAuthClient) throws -> IntrospectionResponse {
        let audiences = [oauth.issuer] + oauth.resources.resources.map(\.identifier)
        // 1. A JWT access token: signed here, not expired, this client's, not revoked.
        if let claims = try? AccessTokenClaims.verify(
            request.token, verifier: try oauth.verifier(), issuer: oauth.issuer, audiences: audiences,
            now: oauth.system.now(), leeway: 0)
        {
            guard claims.clientID == client.clientID, try store.accessTokenIsLive(claims) else {
                return .inactive
            }
            return .active(Self.active(claims, issuer: oauth.issuer))
        }
        // 2. An opaque access token (for an API configured so): this client's, live.
        if let opaque = try store.liveOpaqueAccessToken(request.token) {
            guard opaque.clientID == client.clientID else { return .inactive }
            return .active(try active(opaque))
        }
        // 3. Otherwise a refresh token: live, and this client's.
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

    /// RFC 7662 §2.1, §4 for a resource server: only access tokens whose `aud` is the API's
    /// identifier are active for it. Another API's token, a token for this server's own
    /// endpoints and every refresh token are `inactive`, so an API learns nothing about
    /// tokens that were not meant for it.
    func introspect(_ request: IntrospectionRequest, resourceServer api: ProtectedResource) throws
        -> IntrospectionResponse
    {
        // 1. A JWT access token whose audience is this API: signed here, not expired, not revoked.
        if let claims = try? AccessTokenClaims.verify(
            request.token, verifier: try oauth.verifier(), issuer: oauth.issuer, audience: api.identifier,
            now: oauth.system.now(), leeway: 0)
        {
            guard try store.accessTokenIsLive(claims) else { return .inactive }
            return .active(Self.active(claims, issuer: oauth.issuer))
        }
        // 2. An opaque access token recorded for this API.
        guard let opaque = try store.liveOpaqueAccessToken(request.token), opaque.audience == api.identifier
        else { return .inactive }
        var token = try active(opaque)
        // The claims the API's configuration asks for, as they are now.
        if let accountID = opaque.accountID, !api.tokenClaims.isEmpty {
            token.extraClaims = TokenFlow.attributeClaims(
                try store.attributes(accountID: accountID), for: api)
        }
        return .active(token)
    }

    private static func active(_ claims: AccessTokenClaims, issuer: String)
        -> IntrospectionResponse.ActiveToken
    {
        var token = IntrospectionResponse.ActiveToken(
            scope: claims.scope, clientID: claims.clientID,
            tokenType: claims.confirmationJKT == nil ? "Bearer" : "DPoP",
            expiresAt: claims.expiresAt, issuedAt: claims.issuedAt, subject: claims.subject,
            audience: [claims.audience], issuer: issuer, jwtID: claims.jwtID)
        token.extraClaims = claims.extraClaims
        token.confirmationJKT = claims.confirmationJKT
        return token
    }

    /// An opaque token's binding comes from its record (RFC 9449 §6.2): `token_type` `DPoP`
    /// and `cnf.jkt`, which the API compares with the proof it received.
    private func active(_ opaque: OpaqueAccessToken) throws -> IntrospectionResponse.ActiveToken {
        var token = IntrospectionResponse.ActiveToken(
            scope: opaque.scopes, clientID: opaque.clientID,
            tokenType: opaque.dpopJKT == nil ? "Bearer" : "DPoP",
            expiresAt: opaque.expiresAt, issuedAt: opaque.issuedAt,
            subject: opaque.accountID?.lowercased ?? opaque.clientID,
            audience: [opaque.audience ?? oauth.issuer], issuer: oauth.issuer, jwtID: opaque.jti)
        token.confirmationJKT = opaque.dpopJKT
        return token
    }

    /// A DPoP proof sent along (RFC 9449 allows one at any endpoint): checked by the route,
    /// and used once.
    func accept(_ proof: DPoPProof?) throws {
        guard let proof else { return }
        guard try store.recordDPoPProof(proof) else { throw DPoPProofs.replayed(at: .authorizationServer) }
    }
}
