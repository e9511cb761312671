import Foundation

/// A registered client as the protocol logic sees it. The application builds it from
/// its configuration; nothing here reads files or databases.
public struct OAuthClient: Sendable, Equatable {
    /// RFC 8252 / OpenID Connect Registration `application_type`: decides which redirect
    /// URIs are acceptable (loopback with any port only for native apps).
    public enum ApplicationType: String, Sendable, Codable { case web, native }

    /// `token_endpoint_auth_method` (RFC 7591 §2). `none` makes the client public.
    public enum AuthMethod: String, Sendable, Codable, CaseIterable {
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        case privateKeyJWT = "private_key_jwt"
        case none
    }

    public enum GrantType: String, Sendable, Codable, CaseIterable {
        case authorizationCode = "authorization_code"
        case refreshToken = "refresh_token"
        case clientCredentials = "client_credentials"
        /// RFC 8693 §2.1; allowed to clients with `appleAppIDs` (the app's Apple identityToken).
        case tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
    }

    public var clientID: String
    public var applicationType: ApplicationType
    /// Compared by exact string (plus the loopback port rule for native clients).
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    public var tokenEndpointAuthMethod: AuthMethod
    /// `$hmac-sha256$<salt>$<mac>` (see `ClientSecret`), for the two secret methods.
    public var clientSecretHash: String?
    public var grantTypes: Set<GrantType>
    /// The scopes this client may obtain; requests for others are narrowed away.
    public var scopes: Set<String>
    public var idTokenSignedResponseAlg: JWSAlgorithm
    /// False only exempts a confidential client from PKCE; such requests then need a
    /// `nonce` (RFC 9700 §2.1.1). Public clients always need PKCE.
    public var requirePKCE: Bool
    /// First-party clients skip the consent screen.
    public var firstParty: Bool
    /// Public keys for `private_key_jwt`.
    public var jwks: JWKS?
    public var backchannelLogoutURI: String?
    /// A confidential client gets refresh tokens without `offline_access` too; they end with
    /// the browser session. Ignored for public clients.
    public var refreshTokensWithoutOfflineAccess: Bool
    /// `first_party_password_step`: the authorization challenge endpoint
    /// (draft-ietf-oauth-first-party-apps §4.1) also takes a password from this first-party
    /// native app. Off by default: anyone can claim a public client's id there, and a password
    /// step would turn it into an endpoint for credential stuffing (§9.3).
    public var firstPartyPasswordStep: Bool
    /// RFC 9126 §6: the client's authorization requests are accepted only through `/par`.
    public var requirePushedAuthorizationRequests: Bool
    /// RFC 9101 §10.5: the client's authorization requests must come in a signed request
    /// object (`request`, at /authorize or in the pushed body).
    public var requireSignedRequestObject: Bool
    /// Where the client publishes its public keys (RFC 7591 §2), fetched when a request
    /// object or client assertion needs them; a client has `jwks` or `jwks_uri`, not both.
    public var jwksURI: String?
    /// A security profile whose rules apply together (`fapi2`: FAPI 2.0 Security Profile).
    public var profile: ClientProfile
    /// `dpop_bound_access_tokens` (RFC 9449 §5.2): every token request must carry a DPoP
    /// proof, so every access token is sender-constrained.
    public var dpopBoundAccessTokens: Bool
    /// `apple_app_ids`: the bundle ids of this client's iOS apps whose Sign in with Apple
    /// `identityToken` it may exchange at the token endpoint (RFC 8693); each must be one of
    /// the apple upstream provider's `bundle_ids`. Empty: the client may not exchange Apple tokens.
    public var appleAppIDs: [String]

    public init(
        clientID: String, applicationType: ApplicationType, redirectURIs: [String],
        postLogoutRedirectURIs: [String] = [], tokenEndpointAuthMethod: AuthMethod,
        clientSecretHash: String? = nil,
        grantTypes: Set<GrantType> = [.authorizationCode, .refreshToken],
        scopes: Set<String> = ["openid", "profile", "email", "offline_access"],
        idTokenSignedResponseAlg: JWSAlgorithm = .RS256, requirePKCE: Bool = true, firstParty: Bool = false,
        jwks: JWKS? = nil, backchannelLogoutURI: String? = nil,
        refreshTokensWithoutOfflineAccess: Bool = false,
        requirePushedAuthorizationRequests: Bool = false, requireSignedRequestObject: Bool = false,
        jwksURI: String? = nil, profile: ClientProfile = .standard, firstPartyPasswordStep: Bool = false,
        dpopBoundAccessTokens: Bool = false, appleAppIDs: [String] = []
    ) {
        self.clientID = clientID
        self.applicationType = applicationType
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.tokenEndpointAuthMethod = tokenEndpointAuthMethod
        self.clientSecretHash = clientSecretHash
        self.grantTypes = grantTypes
        self.scopes = scopes
        self.idTokenSignedResponseAlg = idTokenSignedResponseAlg
        self.requirePKCE = requirePKCE
        self.firstParty = firstParty
        self.jwks = jwks
        self.backchannelLogoutURI = backchannelLogoutURI
        self.refreshTokensWithoutOfflineAccess = refreshTokensWithoutOfflineAccess
        self.firstPartyPasswordStep = firstPartyPasswordStep
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        self.requireSignedRequestObject = requireSignedRequestObject
        self.jwksURI = jwksURI
        self.profile = profile
        self.dpopBoundAccessTokens = dpopBoundAccessTokens
        self.appleAppIDs = appleAppIDs
    }

    /// A client that cannot keep a secret (RFC 6749 §2.1).
    public var isPublic: Bool { tokenEndpointAuthMethod == .none }

    /// Whether PKCE is required for this client's authorization requests.
    /// (FAPI 2.0 Security Profile §5.3.2.2: always for a fapi2 client.)
    public var pkceRequired: Bool { isPublic || requirePKCE || profile == .fapi2 }
}

/// The security profile a client is held to. `fapi2` turns on the FAPI 2.0 Security Profile's
/// rules together (docs/fapi.md): pushed requests only, PKCE S256, sender-constrained tokens,
/// short codes and strong client authentication.
public enum ClientProfile: String, Sendable, Equatable, CaseIterable {
    case standard
    case fapi2
}

extension OAuthClient {
    /// The algorithms the client's own signatures (request objects, client assertions) may use:
    /// every one this server verifies; for a FAPI 2.0 client only PS256, ES256 and EdDSA (FAPI 2.0
    /// Security Profile §5.4.1).
    public var signingAlgorithms: Set<JWSAlgorithm> {
        profile == .fapi2 ? [.PS256, .ES256, .EdDSA] : Set(JWSAlgorithm.allCases)
    }
}
