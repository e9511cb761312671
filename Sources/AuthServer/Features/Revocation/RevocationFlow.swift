import Foundation
import OIDC

/// Token revocation (RFC 7009 §2.1): a client revokes only its own tokens; a token that is
/// unknown or another client's is left alone, and the client is not told which it was.
struct RevocationFlow {
    let oauth: OAuthServices
    let store: any RevocationStore

    /// A DPoP proof sent along is used once (RFC 9449 §11.1). Revoking a key-bound refresh
    /// token needs the client's authentication, not the key: the client may have lost the
    /// key, and revoking is what it should do then.
    func revoke(_ request: RevocationRequest, client: OAuthClient, dpop: DPoPProof? = nil) throws {
        if let dpop, try !store.recordDPoPProof(dpop) {
            throw DPoPProofs.replayed(at: .authorizationServer)
        }
        // Access tokens are JWTs: a token that verifies names its jti; anything else is
        // looked up as an opaque access token (an API's), then as a refresh token (the hint is
        // only a hint).
        if let access = accessToken(request.token) {
            // 1. An access token, if it is this client's: its record; a client's own JWT gets
            // one (it was issued without).
            if access.clientID == client.clientID {
                if let own = clientToken(access.jws) {
                    try store.revokeClientAccessToken(
                        own, audience: own.audience == oauth.issuer ? nil : own.audience)
                } else {
                    try store.revokeAccessToken(jti: access.jti, clientID: client.clientID)
                }
            }
        } else if try store.revokeOpaqueAccessToken(request.token, clientID: client.clientID) {
            // 2. An opaque access token of this client: revoked above.
        } else if let refresh = try store.refreshTokenInfo(request.token),
            refresh.grant.clientID == client.clientID
        {
            // 2. A refresh token: its whole family, with the access tokens issued from it.
            try store.revokeFamily(refresh.grant.familyID, reason: "revoked_by_client")
        }
    }

    /// A client_credentials JWT (`gty`) this server signed, whatever its audience, and even if
    /// this instance's clock finds it expired: another instance's clock, or PostgreSQL's, may
    /// not yet, and the record costs nothing (the purge removes it an hour after `exp`).
    private func clientToken(_ jws: VerifiedJWS) -> AccessTokenClaims? {
        let audiences = [oauth.issuer] + oauth.resources.resources.map(\.identifier)
        guard
            let claims = try? AccessTokenClaims.validate(
                jws, issuer: oauth.issuer, audiences: audiences, now: oauth.system.now(), leeway: .infinity),
            claims.isClientCredentials
        else { return nil }
        return claims
    }

    /// An access token this server signed (even if expired): the verified JWS, its `jti` and
    /// `client_id`.
    private func accessToken(_ token: String) -> (jws: VerifiedJWS, jti: String, clientID: String)? {
        guard token.split(separator: ".", omittingEmptySubsequences: false).count == 3,
            let verified = try? oauth.verifier().verify(token, expectedType: AccessTokenClaims.type),
            let payload = try? verified.decodePayload(as: [String: JSONValue].self),
            let jti = payload["jti"]?.stringValue, let clientID = payload["client_id"]?.stringValue
        else { return nil }
        return (verified, jti, clientID)
    }
}
