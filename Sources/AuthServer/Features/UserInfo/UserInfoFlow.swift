import Foundation
import OIDC

/// What `/userinfo` answers for a presented access token.
enum UserInfoOutcome {
    /// `sub` and the claims the token's scopes release.
    case claims([String: JSONValue])
    /// The token is invalid, revoked, lacks `openid`, or its account is gone.
    case refused(OAuthError)
}

/// The userinfo request (OpenID Connect Core §5.3), from the access token to the claims.
struct UserInfoFlow {
    let oauth: OAuthServices
    let store: any UserInfoStore

    func claims(accessToken token: String) throws -> UserInfoOutcome {
        // 1. A token this server signed, for itself, not expired.
        let claims: AccessTokenClaims
        do {
            claims = try AccessTokenClaims.verify(
                token, verifier: try oauth.verifier(), issuer: oauth.issuer, audience: oauth.issuer,
                now: oauth.system.now(), leeway: 0)
        } catch let error as JOSEError {
            return .refused(BearerToken.invalidToken(debug: "\(error)"))
        }
        // 2. Not revoked.
        guard let requested = try store.liveAccessTokenUserinfoClaims(jti: claims.jwtID) else {
            return .refused(BearerToken.invalidToken("The token was revoked."))
        }
        // 3. Issued to a user (client credentials have no account) with `openid`.
        guard claims.scope.contains(Scopes.openid), let accountID = UUID(uuidString: claims.subject) else {
            return .refused(BearerToken.insufficientScope("The 'openid' scope is required."))
        }
        // 4. The account's claims, as far as the scopes or the `claims` request release them.
        let available = try store.userClaims(accountID: accountID)
        guard !available.isEmpty else {
            return .refused(BearerToken.invalidToken("The account no longer exists."))
        }
        return .claims(
            UserInfoClaims.select(
                subject: claims.subject, available: available, scopes: claims.scope, requested: requested))
    }
}
