/// The successful token response body (RFC 6749 §5.1, Core §3.1.3.3). The caller adds
/// `Cache-Control: no-store` and `Pragma: no-cache`.
public struct TokenResponse: Sendable, Equatable {
    public var accessToken: String
    public var expiresIn: Int
    public var refreshToken: String?
    public var idToken: String?
    /// Always returned, since it may differ from the request (RFC 6749 §3.3).
    public var scope: [String]
    /// `Bearer`, or `DPoP` for an access token bound to a DPoP key (RFC 9449 §5).
    public var tokenType = "Bearer"
    /// `issued_token_type` of a token exchange response (RFC 8693 §2.2.1); nil elsewhere.
    public var issuedTokenType: String? = nil

    public init(accessToken: String, expiresIn: Int, refreshToken: String?, idToken: String?, scope: [String])
    {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    public var json: [String: JSONValue] {
        var body: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string(tokenType),
            "expires_in": .int(expiresIn),
        ]
        if let refreshToken { body["refresh_token"] = .string(refreshToken) }
        if let idToken { body["id_token"] = .string(idToken) }
        if let issuedTokenType { body["issued_token_type"] = .string(issuedTokenType) }
        if !scope.isEmpty { body["scope"] = .string(scope.joined(separator: " ")) }
        return body
    }

    /// The JSON bytes (sorted keys).
    public var jsonBody: [UInt8] { JSONBody.encode(json) }
}
