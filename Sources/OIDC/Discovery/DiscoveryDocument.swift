/// The provider metadata served at `/.well-known/openid-configuration` (OpenID Connect
/// Discovery 1.0 §3, RFC 8414 §2), listing exactly what this module implements.
public struct DiscoveryDocument: Sendable, Equatable {
    /// The issuer identifier: `https` URL without query or fragment, no trailing slash.
    public var issuer: String
    public var uiLocales: [String]
    /// The server accepts authorization requests only when pushed (RFC 9126 §5).
    public var requirePushedAuthorizationRequests: Bool

    public init(
        issuer: String, uiLocales: [String] = ["en", "ja"], requirePushedAuthorizationRequests: Bool = false
    ) {
        self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        self.uiLocales = uiLocales
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
    }

    public var authorizationEndpoint: String { issuer + "/authorize" }
    public var tokenEndpoint: String { issuer + "/token" }
    public var userinfoEndpoint: String { issuer + "/userinfo" }
    public var jwksURI: String { issuer + "/jwks" }
    public var revocationEndpoint: String { issuer + "/revoke" }
    public var introspectionEndpoint: String { issuer + "/introspect" }
    public var endSessionEndpoint: String { issuer + "/logout" }
    /// draft-ietf-oauth-first-party-apps §4.1, §8: where first-party native apps sign in
    /// without a browser.
    public var authorizationChallengeEndpoint: String { issuer + "/authorize-challenge" }
    /// RFC 9126 §5.
    public var pushedAuthorizationRequestEndpoint: String { issuer + "/par" }

    /// The values a `private_key_jwt` assertion's `aud` may hold.
    /// RFC 9126 §2: the pushed authorization request endpoint's URL is one of them (its `jti`
    /// is one-time across every endpoint, so accepting it elsewhere opens no replay).
    public var clientAssertionAudiences: [String] {
        [tokenEndpoint, issuer, pushedAuthorizationRequestEndpoint]
    }

    public static let signingAlgorithms: [String] = ["RS256", "ES256", "EdDSA", "PS256"]
    static let authMethods = OAuthClient.AuthMethod.allCases.map(\.rawValue)
    static let confidentialAuthMethods = authMethods.filter { $0 != "none" }

    public var json: [String: JSONValue] {
        func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
        return [
            "issuer": .string(issuer),
            "authorization_endpoint": .string(authorizationEndpoint),
            "token_endpoint": .string(tokenEndpoint),
            "userinfo_endpoint": .string(userinfoEndpoint),
            "jwks_uri": .string(jwksURI),
            "revocation_endpoint": .string(revocationEndpoint),
            "introspection_endpoint": .string(introspectionEndpoint),
            "end_session_endpoint": .string(endSessionEndpoint),
            "authorization_challenge_endpoint": .string(authorizationChallengeEndpoint),
            "pushed_authorization_request_endpoint": .string(pushedAuthorizationRequestEndpoint),
            "require_pushed_authorization_requests": .bool(requirePushedAuthorizationRequests),
            "response_types_supported": strings(["code"]),
            "response_modes_supported": strings(ResponseMode.allCases.map(\.rawValue)),
            "grant_types_supported": strings(OAuthClient.GrantType.allCases.map(\.rawValue)),
            "subject_types_supported": strings(["public"]),
            "id_token_signing_alg_values_supported": strings(Self.signingAlgorithms),
            "token_endpoint_auth_methods_supported": strings(Self.authMethods),
            "token_endpoint_auth_signing_alg_values_supported": strings(Self.signingAlgorithms),
            "revocation_endpoint_auth_methods_supported": strings(Self.authMethods),
            "revocation_endpoint_auth_signing_alg_values_supported": strings(Self.signingAlgorithms),
            "introspection_endpoint_auth_methods_supported": strings(Self.confidentialAuthMethods),
            "introspection_endpoint_auth_signing_alg_values_supported": strings(Self.signingAlgorithms),
            "code_challenge_methods_supported": strings(["S256"]),
            "scopes_supported": strings(Scopes.supported),
            "claims_supported": strings(
                ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "sid"]
                    + Scopes.profileClaims + Scopes.emailClaims),
            "claims_parameter_supported": .bool(true),
            "acr_values_supported": strings(AuthenticationContextClass.supported),
            // RFC 9101: signed request objects in `request`, at /authorize and in pushed bodies.
            "request_parameter_supported": .bool(true),
            "request_object_signing_alg_values_supported": strings(Self.signingAlgorithms),
            "request_uri_parameter_supported": .bool(false),
            "require_request_uri_registration": .bool(true),
            "authorization_response_iss_parameter_supported": .bool(true),
            "backchannel_logout_supported": .bool(true),
            "backchannel_logout_session_supported": .bool(true),
            "prompt_values_supported": strings(Prompt.allCases.map(\.rawValue)),
            "ui_locales_supported": strings(uiLocales),
            // RFC 9449 §5.1: the algorithms a DPoP proof may use.
            "dpop_signing_alg_values_supported": strings(DPoPProofVerifier.algorithms.map(\.rawValue)),
        ]
    }

    /// The members as served: ID tokens can only be signed with an algorithm that has a
    /// signing key right now, so `id_token_signing_alg_values_supported` lists only those
    /// of `available` (in the usual order).
    public func json(signingAlgorithmsWithKeys available: Set<String>) -> [String: JSONValue] {
        var members = json
        members["id_token_signing_alg_values_supported"] = .array(
            Self.signingAlgorithms.filter(available.contains).map(JSONValue.string))
        return members
    }

    /// The JSON bytes (sorted keys, unescaped slashes).
    public var jsonBody: [UInt8] { JSONBody.encode(json) }
}
