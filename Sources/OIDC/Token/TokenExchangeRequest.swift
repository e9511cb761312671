/// A token exchange request (RFC 8693 §2.1) as this server accepts it: a native app trades the
/// Sign in with Apple `identityToken` it received for this server's own tokens.
///
/// - `subject_token`: the identityToken; `subject_token_type` must be
///   `urn:ietf:params:oauth:token-type:id_token` (RFC 8693 §3).
/// - `apple_authorization_code`: the `authorizationCode` Apple gave the app with the token. The
///   server redeems it at Apple (which accepts it once, for five minutes): proof the token was
///   issued just now to an app of this team, and the refresh token that is revoked at Apple
///   when the account is deleted.
/// - `apple_nonce`: the raw nonce whose SHA-256 (hex) the app put into the Apple request
///   (`AppleNonce`).
/// - `scope` (RFC 8693 §2.1), `openid` when absent; `requested_token_type` may only ask for an
///   access token. Delegation (`actor_token`) is not offered.
public struct TokenExchangeRequest: Sendable, Equatable {
    public static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    public static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    public static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    public var subjectToken: String
    public var appleAuthorizationCode: String
    public var appleNonce: String
    public var scope: [String]

    public init(subjectToken: String, appleAuthorizationCode: String, appleNonce: String, scope: [String]) {
        self.subjectToken = subjectToken
        self.appleAuthorizationCode = appleAuthorizationCode
        self.appleNonce = appleNonce
        self.scope = scope
    }

    static let knownParameters = [
        "subject_token", "subject_token_type", "requested_token_type", "actor_token", "actor_token_type",
        "audience", "apple_authorization_code", "apple_nonce",
    ]

    /// The checks of RFC 8693 §2.1 in the order of its parameter list; each refusal is
    /// `invalid_request` (§2.2.2) except an `audience`, which names no target this server
    /// issues for (`invalid_target`).
    static func parse(_ parameters: Parameters) throws(OAuthError) -> TokenExchangeRequest {
        try parameters.rejectDuplicates(of: knownParameters)
        let subjectToken = try parameters.required("subject_token")
        let subjectTokenType = try parameters.required("subject_token_type")
        guard subjectTokenType == idTokenType else {
            throw .invalidRequest(
                "The 'subject_token_type' must be \(idTokenType): only Sign in with Apple identity tokens are exchanged."
            )
        }
        if let requested = try parameters.value("requested_token_type"), requested != accessTokenType {
            throw .invalidRequest("The 'requested_token_type' may only be \(accessTokenType).")
        }
        if parameters.contains("actor_token") || parameters.contains("actor_token_type") {
            throw .invalidRequest("Delegation ('actor_token') is not supported.")
        }
        if parameters.contains("audience") {
            throw OAuthError(.invalidTarget, hint: "Name the API with 'resource' instead of 'audience'.")
        }
        let code = try parameters.required("apple_authorization_code")
        let nonce = try parameters.required("apple_nonce")
        guard AppleNonce.isWellFormed(nonce) else {
            throw .invalidRequest(
                "The 'apple_nonce' must be the raw nonce of \(AppleNonce.minimumLength) to \(AppleNonce.maximumLength) characters."
            )
        }
        let scope = SpaceList.split(try parameters.value("scope"))
        return TokenExchangeRequest(
            subjectToken: subjectToken, appleAuthorizationCode: code, appleNonce: nonce,
            scope: scope.isEmpty ? [Scopes.openid] : scope)
    }
}
