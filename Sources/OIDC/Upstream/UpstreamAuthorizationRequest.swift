import Crypto
import Foundation

/// The secrets of one authorization request sent to an upstream OpenID provider, all derived
/// from its `state`.
///
/// The request is stored as the SHA-256 of its state only. The nonce (OpenID Connect Core
/// §3.1.2.1) and the PKCE `code_verifier` (RFC 7636 §4.1) are HMACs of the state under a key
/// derived from the key-encryption key, so every instance re-derives them when the browser
/// returns with the state, and a copy of the database alone yields neither.
public struct UpstreamRequestSecrets: Sendable {
    public let key: SymmetricKey

    public init(key: SymmetricKey) { self.key = key }

    /// A fresh state: 32 random bytes, base64url (43 characters).
    public static func state(randomBytes: [UInt8]) -> String { Base64URL.encode(randomBytes) }

    /// Only what `state(randomBytes:)` makes: 43 base64url characters.
    public static func isWellFormed(state: String) -> Bool {
        state.utf8.count == 43 && (try? Base64URL.decode(state))?.count == 32
    }

    /// What the database keeps of a state, a binding cookie or a pending link token.
    public static func digest(_ value: String) -> [UInt8] { SHA256.hash(data: Array(value.utf8)).bytes }

    /// The ID token's `nonce` for this state.
    public func nonce(forState state: String) -> String { derive("nonce", state) }

    /// The PKCE `code_verifier` for this state: 43 base64url characters, within RFC 7636 §4.1's
    /// 43 to 128 unreserved characters.
    public func codeVerifier(forState state: String) -> String { derive("code_verifier", state) }

    /// `code_challenge` with method S256 (RFC 7636 §4.2): BASE64URL(SHA256(ASCII(code_verifier))).
    public static func codeChallenge(verifier: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)).bytes)
    }

    private func derive(_ label: String, _ state: String) -> String {
        Base64URL.encode(
            HMAC.authenticationCode(for: Array("upstream \(label):\(state)".utf8), using: key).bytes.prefix(
                32))
    }
}

/// The authentication request URL (OpenID Connect Core §3.1.2.1) sent to an upstream provider.
public struct UpstreamAuthorizationURL: Sendable, Equatable {
    public var endpoint: String
    public var clientID: String
    public var redirectURI: String
    public var scope: String
    public var state: String
    public var nonce: String
    public var codeChallenge: String
    /// `form_post` for Apple (OAuth 2.0 Form Post Response Mode), nil for the default query.
    public var responseMode: String?
    /// The `claims` parameter (OpenID Connect Core §5.5): asks for the address and name in the
    /// ID token itself, where a code-flow provider may otherwise release them at userinfo only.
    /// Providers that do not support it ignore it.
    public var claims: String?

    public init(
        endpoint: String, clientID: String, redirectURI: String, scope: String, state: String, nonce: String,
        codeChallenge: String, responseMode: String? = nil, claims: String? = nil
    ) {
        self.endpoint = endpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.responseMode = responseMode
        self.claims = claims
    }

    /// The URL, keeping any query the endpoint already has; nil for an endpoint that is not
    /// an absolute https (or, for tests, http) URL.
    public var string: String? {
        guard var components = URLComponents(string: endpoint),
            let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
            components.host?.isEmpty == false, components.fragment == nil
        else { return nil }
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "scope", value: scope),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "nonce", value: nonce),
            URLQueryItem(name: "code_challenge", value: codeChallenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if let responseMode { items.append(URLQueryItem(name: "response_mode", value: responseMode)) }
        if let claims { items.append(URLQueryItem(name: "claims", value: claims)) }
        components.queryItems = items
        // `+` is legal in a query but read as a space by form decoders: encode it.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(
            of: "+", with: "%2B")
        return components.string
    }
}
