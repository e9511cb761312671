/// `prompt` values (OpenID Connect Core §3.1.2.1, Initiating User Registration 1.0).
public enum Prompt: String, Sendable, Equatable, Hashable, CaseIterable {
    case none
    case login
    case consent
    case selectAccount = "select_account"
    case create
}

/// A validated authorization request: everything the login, consent and code-issuing
/// steps need. Built only by `AuthorizationRequest.validate(_:client:issuer:)`.
public struct AuthorizationRequest: Sendable, Equatable {
    public var client: OAuthClient
    /// Where the response goes (validated redirect URI, response mode, state, iss).
    public var redirect: AuthorizationRedirect
    /// Granted-to-be scopes: requested, known and allowed for the client, in request order.
    public var scopes: [String]
    public var nonce: String?
    /// The S256 challenge to store with the code; nil only for an exempt confidential client.
    public var codeChallenge: String?
    public var prompt: Set<Prompt>
    /// Seconds; the user must have authenticated at most this long ago.
    public var maxAge: Int?
    public var loginHint: String?
    public var uiLocales: [String]
    /// The `claims` parameter as sent (Core §5.5).
    public var claims: ClaimsRequest
    /// Profile/email claims requested for the ID token via `claims` that the client may
    /// obtain; released whether or not their scope was requested (consent covers them, see
    /// `consentScopes`).
    public var idTokenClaims: Set<String>
    /// The same for the userinfo response (`claims` member `userinfo`).
    public var userinfoClaims: Set<String>
    /// `acr_values` and an `acr` claim (nil: no requirement).
    public var acr: AuthenticationContextRequest?
    /// The subject of a verified `id_token_hint` (Core §3.1.2.1).
    public var idTokenHintSubject: String?

    /// The users the request names: a verified `id_token_hint`'s subject and any `sub`
    /// value of `claims` (Core §5.5.1). The signed-in user must be each of them.
    public var expectedSubjects: Set<String> {
        var subjects = claims.requestedSubjects
        if let idTokenHintSubject { subjects.insert(idTokenHintSubject) }
        return subjects
    }

    /// The scopes the user approves: the requested ones, then the scopes of claims requested
    /// through `claims` (a claim is released only with its scope's consent).
    public var consentScopes: [String] {
        var all = scopes
        for scope in ClaimsRequest.scopes(for: idTokenClaims.union(userinfoClaims)).sorted()
        where !all.contains(scope) {
            all.append(scope)
        }
        return all
    }
    /// The APIs (resource indicators, RFC 8707) the grant covers: named by `resource` or by
    /// one of their scopes.
    public var resources: [String] = []
    /// The DPoP key thumbprint the code is bound to (`dpop_jkt`, RFC 9449 §10).
    public var dpopJKT: String? = nil

    /// Whether this is an OpenID Connect request (scope contains `openid`): only then is
    /// an ID token issued.
    public var isOpenID: Bool { scopes.contains("openid") }
}
