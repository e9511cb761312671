import Foundation

/// A parsed token request (RFC 6749 §4.1.3, §6, §4.4). Client authentication is separate
/// (`ClientAuthentication`).
public enum TokenRequest: Sendable, Equatable {
    case authorizationCode(code: String, redirectURI: String?, codeVerifier: String?)
    /// `scope`, when present, asks for a narrower scope than originally granted.
    case refreshToken(refreshToken: String, scope: [String]?)
    case clientCredentials(scope: [String])
    /// RFC 8693: a Sign in with Apple identityToken exchanged for this server's tokens.
    case tokenExchange(TokenExchangeRequest)

    static let knownParameters = [
        "grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope",
        "client_id", "client_secret", "client_assertion", "client_assertion_type",
    ]

    public var grantType: OAuthClient.GrantType {
        switch self {
        case .authorizationCode: return .authorizationCode
        case .refreshToken: return .refreshToken
        case .clientCredentials: return .clientCredentials
        case .tokenExchange: return .tokenExchange
        }
    }

    /// Parses the form body. Duplicated known parameters are refused; unknown ones ignored.
    public static func parse(_ parameters: Parameters) throws(OAuthError) -> TokenRequest {
        try parameters.rejectDuplicates(of: knownParameters)
        guard let grantType = try parameters.value("grant_type") else {
            throw .invalidRequest("The 'grant_type' parameter is missing.")
        }
        switch grantType {
        case "authorization_code":
            // RFC 6749 §4.1.3: required when the authorization request named one, which every
            // request at /authorize does; a code from the authorization challenge endpoint
            // (draft-ietf-oauth-first-party-apps §6) has none. Checked against the code.
            return .authorizationCode(
                code: try parameters.required("code"), redirectURI: try parameters.value("redirect_uri"),
                codeVerifier: try parameters.value("code_verifier"))
        case "refresh_token":
            return .refreshToken(
                refreshToken: try parameters.required("refresh_token"),
                scope: try parameters.value("scope").map { SpaceList.split($0) })
        case "client_credentials":
            return .clientCredentials(scope: SpaceList.split(try parameters.value("scope")))
        case TokenExchangeRequest.grantType:
            return .tokenExchange(try TokenExchangeRequest.parse(parameters))
        default:
            throw OAuthError(
                .unsupportedGrantType,
                hint: "Use 'authorization_code', 'refresh_token' or 'client_credentials'.")
        }
    }

    /// The authenticated client must be registered for this grant (`unauthorized_client`);
    /// `client_credentials` is for confidential clients only.
    /// Token exchange is for clients that name their apps (`appleAppIDs`), whatever their
    /// `grant_types`.
    public func checkAllowed(for client: OAuthClient) throws(OAuthError) {
        if grantType == .tokenExchange {
            guard !client.appleAppIDs.isEmpty else {
                throw OAuthError(
                    .unauthorizedClient, hint: "The client names no apps whose Apple sign-in it may exchange."
                )
            }
            return
        }
        guard client.grantTypes.contains(grantType) else {
            throw OAuthError(.unauthorizedClient, hint: "The client may not use this grant type.")
        }
        if grantType == .clientCredentials && client.isPublic {
            throw OAuthError(
                .unauthorizedClient, hint: "Public clients may not use the client credentials grant.")
        }
    }
}

/// What the application stored when it issued an authorization code, handed back for the
/// token request after the code was consumed (looked up by `TokenDigest.sha256(code)`).
public struct IssuedAuthorizationCode: Sendable, Equatable {
    public var clientID: String
    /// Nil for a code of the authorization challenge endpoint, which redirects nowhere.
    public var redirectURI: String?
    public var codeChallenge: String?
    public var scopes: [String]
    public var nonce: String?
    public var accountID: String
    public var authTime: Date
    public var amr: [String]
    public var sessionID: String?
    public var idTokenClaims: Set<String>
    public var expiresAt: Date
    /// The APIs the grant covers (RFC 8707).
    public var resources: [String] = []
    /// The DPoP key (`dpop_jkt`, RFC 9449 §10) whose proof must come with the token request.
    public var dpopJKT: String? = nil

    public init(
        clientID: String, redirectURI: String?, codeChallenge: String?, scopes: [String], nonce: String?,
        accountID: String, authTime: Date, amr: [String], sessionID: String?, idTokenClaims: Set<String>,
        expiresAt: Date
    ) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.scopes = scopes
        self.nonce = nonce
        self.accountID = accountID
        self.authTime = authTime
        self.amr = amr
        self.sessionID = sessionID
        self.idTokenClaims = idTokenClaims
        self.expiresAt = expiresAt
    }

    /// What to store for a validated request once the session decided to proceed.
    public init(request: AuthorizationRequest, session: BrowserSession, expiresAt: Date) {
        self.init(
            clientID: request.client.clientID, redirectURI: request.redirect.redirectURI,
            codeChallenge: request.codeChallenge, scopes: request.scopes, nonce: request.nonce,
            accountID: session.accountID, authTime: session.authTime, amr: session.amr,
            sessionID: session.sessionID,
            idTokenClaims: request.idTokenClaims, expiresAt: expiresAt)
        self.resources = request.resources
        self.dpopJKT = request.dpopJKT
    }
}

/// Checks of the three grants against stored state.
public enum TokenGrantValidation {
    /// RFC 6749 §4.1.3 and RFC 7636 §4.6: the code exists and is unused (`stored` nil
    /// otherwise), belongs to this client, has not expired, the `redirect_uri` equals the
    /// one of the authorization request, and the PKCE verifier matches.
    public static func authorizationCode(
        code stored: IssuedAuthorizationCode?, redirectURI: String?, codeVerifier: String?,
        client: OAuthClient, now: Date
    ) throws(OAuthError) -> IssuedAuthorizationCode {
        guard let stored else {
            throw .invalidGrant("The authorization code is invalid, expired or already used.")
        }
        guard stored.clientID == client.clientID else {
            throw .invalidGrant("The authorization code was issued to another client.")
        }
        guard now < stored.expiresAt else {
            throw .invalidGrant(
                "The authorization code is invalid, expired or already used.", debug: "expired")
        }
        if let expected = stored.redirectURI {
            guard let redirectURI else {
                throw .invalidRequest("The 'redirect_uri' parameter is missing.")
            }
            guard expected == redirectURI else {
                throw .invalidGrant("The 'redirect_uri' does not match the authorization request.")
            }
        }
        try PKCE.verify(verifier: codeVerifier, challenge: stored.codeChallenge)
        return stored
    }

    /// RFC 6749 §6: a requested `scope` must not exceed the granted one; absent means the
    /// same scope as before.
    public static func refreshScope(requested: [String]?, granted: [String]) throws(OAuthError) -> [String] {
        guard let requested else { return granted }
        guard !requested.isEmpty else { return granted }
        guard requested.allSatisfy(granted.contains) else {
            throw .invalidScope("The requested scope exceeds the scope originally granted.")
        }
        return granted.filter(requested.contains)
    }

    /// Whether a code grant starts a refresh-token family: the client may use the
    /// `refresh_token` grant, and the user granted `offline_access` (OpenID Connect Core §11),
    /// or a confidential client opted in to refresh tokens bound to the browser session
    /// (`refreshTokensWithoutOfflineAccess`). Families without `offline_access` end with the
    /// session they were issued under.
    public static func issuesRefreshToken(client: OAuthClient, scopes: [String]) -> Bool {
        guard client.grantTypes.contains(.refreshToken) else { return false }
        if scopes.contains(Scopes.offlineAccess) { return true }
        return !client.isPublic && client.refreshTokensWithoutOfflineAccess
    }

    /// Client credentials act for the client, not a user: user scopes (`openid`,
    /// `offline_access`) are never granted; other scopes narrowed to the client's allowed
    /// set like at the authorization endpoint (RFC 6749 §3.3).
    public static func clientCredentialsScope(requested: [String], client: OAuthClient) -> [String] {
        var granted: [String] = []
        for scope in requested
        where client.scopes.contains(scope) && !granted.contains(scope)
            && scope != Scopes.openid && scope != Scopes.offlineAccess
        {
            granted.append(scope)
        }
        return granted
    }
}
