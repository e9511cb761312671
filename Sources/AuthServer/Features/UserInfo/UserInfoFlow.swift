import Foundation
import OIDC

/// What `/userinfo` answers for a presented access token.
enum UserInfoOutcome {
    /// `sub` and the claims the token's scopes release.
    case claims([String: JSONValue])
    /// The token is invalid, revoked, lacks `openid`, or its account is gone.
    case refused(OAuthError)
}

/// How the access token came: as a Bearer token (RFC 6750), or with the DPoP scheme and the
/// request's verified proof (RFC 9449 §7.1).
enum PresentedAccessToken {
    case bearer(String)
    case dpop(String, proof: DPoPProof)

    var token: String {
        switch self {
        case .bearer(let token), .dpop(let token, _): return token
        }
    }
}

/// The userinfo request (OpenID Connect Core §5.3), from the access token to the claims.
struct UserInfoFlow {
    let oauth: OAuthServices
    let store: any UserInfoStore

    /// A DPoP-bound token presented as a Bearer token (RFC 9449 §7.2): answered with the DPoP
    /// challenge, so the client learns which scheme to use.
    static let boundTokenAsBearer = BearerToken.invalidToken(
        "The token is DPoP-bound: present it with the DPoP scheme.")

    func claims(accessToken token: String) throws -> UserInfoOutcome {
        try claims(presented: .bearer(token))
    }

    func claims(presented: PresentedAccessToken) throws -> UserInfoOutcome {
        let token = presented.token
        // 1. A token this server signed, for itself, not expired.
        let claims: AccessTokenClaims
        do {
            claims = try AccessTokenClaims.verify(
                token, verifier: try oauth.verifier(), issuer: oauth.issuer, audience: oauth.issuer,
                now: oauth.system.now(), leeway: 0)
        } catch let error as JOSEError {
            return .refused(BearerToken.invalidToken(debug: "\(error)"))
        }
        // 1b. Sender-constrained (RFC 9449 §7): a bound token only with the DPoP scheme and a
        // proof of its key (§7.2: not as a Bearer token), and the DPoP scheme only for a bound
        // token; the proof in an algorithm the token's client may use (a FAPI 2.0 client's
        // PS256, ES256 or EdDSA, as at /par and /token); each proof once (§11.1).
        switch (presented, claims.confirmationJKT) {
        case (.bearer, nil):
            break
        case (.bearer, .some):
            return .refused(Self.boundTokenAsBearer)
        case (.dpop, nil):
            return .refused(
                BearerToken.invalidToken("The token is not DPoP-bound: present it as a Bearer token."))
        case (.dpop(_, let proof), .some(let jkt)):
            guard proof.thumbprint == jkt else {
                return .refused(DPoPError.keyMismatch.oauthError(at: .resource))
            }
            if let client = oauth.clients.client(claims.clientID),
                !client.signingAlgorithms.contains(proof.algorithm)
            {
                return .refused(DPoPError.algorithmNotAllowed.oauthError(at: .resource))
            }
            guard try store.recordDPoPProof(proof) else {
                return .refused(DPoPProofs.replayed(at: .resource))
            }
        }
        // 2. Not revoked. A client's own token has no user: refused for its scope (step 3).
        if claims.isClientCredentials {
            guard try store.accessTokenIsLive(claims) else {
                return .refused(BearerToken.invalidToken("The token was revoked."))
            }
            return .refused(BearerToken.insufficientScope("The 'openid' scope is required."))
        }
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
