/// What a grant does about refresh tokens, decided before anything is stored.
public enum RefreshTokenIssuance: Sendable, Equatable {
    /// No refresh token: the access token belongs to no family.
    case notIssued
    /// A code grant starts a refresh-token family with its first token.
    case newFamily
    /// A refresh grant always rotates: the used token is replaced by a new one of its family.
    case rotation

    /// Whether the response carries a refresh token.
    public var issuesToken: Bool { self != .notIssued }

    /// The rule of the token endpoint: a code grant starts a family when
    /// `TokenGrantValidation.issuesRefreshToken` allows it (the client may use the
    /// `refresh_token` grant, and `offline_access` was granted or a confidential client opted
    /// in with `refresh_tokens_without_offline_access`); a refresh grant rotates, whatever its
    /// scope, since the family was allowed when it started; client credentials never refresh
    /// (a confidential client can always authenticate again).
    public static func decide(grant: OAuthClient.GrantType, client: OAuthClient, scopes: [String])
        -> RefreshTokenIssuance
    {
        switch grant {
        case .authorizationCode:
            return TokenGrantValidation.issuesRefreshToken(client: client, scopes: scopes)
                ? .newFamily : .notIssued
        case .refreshToken:
            return .rotation
        case .clientCredentials:
            return .notIssued
        }
    }
}
