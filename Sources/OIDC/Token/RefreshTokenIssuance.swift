/// What a grant does about refresh tokens, decided before anything is stored.
public enum RefreshTokenIssuance: Sendable, Equatable {
    /// No refresh token: the access token belongs to no family.
    case notIssued
    /// A code grant starts a refresh-token family with its first token.
    case newFamily
    /// A refresh grant rotates: the used token is replaced by a new one of its family, and a
    /// used token that comes back revokes the family (RFC 9700 §4.14.2).
    case rotation
    /// A refresh grant of a FAPI 2.0 client keeps the token: it stays valid and the response
    /// carries no new one. FAPI 2.0 Security Profile §5.3.2.1 forbids rotation unless a retry
    /// with the previous token succeeds, since a lost response would otherwise cost the grant;
    /// rotation adds nothing for a client whose every request is authenticated with its key
    /// (`private_key_jwt`) and whose access tokens are DPoP-bound.
    case kept

    /// Whether the response carries a new refresh token.
    public var issuesToken: Bool { self == .newFamily || self == .rotation }

    /// Whether the tokens issued belong to a refresh-token family (revoked with it).
    public var belongsToFamily: Bool { self != .notIssued }

    /// The rule of the token endpoint: a code grant starts a family when
    /// `TokenGrantValidation.issuesRefreshToken` allows it (the client may use the
    /// `refresh_token` grant, and `offline_access` was granted or a confidential client opted
    /// in with `refresh_tokens_without_offline_access`); a refresh grant rotates, whatever its
    /// scope, since the family was allowed when it started, except for a FAPI 2.0 client,
    /// whose token is kept (`kept`); client credentials never refresh
    /// (a confidential client can always authenticate again).
    public static func decide(grant: OAuthClient.GrantType, client: OAuthClient, scopes: [String])
        -> RefreshTokenIssuance
    {
        switch grant {
        case .authorizationCode, .tokenExchange:
            return TokenGrantValidation.issuesRefreshToken(client: client, scopes: scopes)
                ? .newFamily : .notIssued
        case .refreshToken:
            return client.profile == .fapi2 ? .kept : .rotation
        case .clientCredentials:
            return .notIssued
        }
    }
}
