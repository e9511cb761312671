/// A token revocation request (RFC 7009 §2.1). The caller authenticates the client first
/// (`ClientAuthentication`), then revokes the token only if it was issued to that client,
/// and answers 200 with an empty body whether or not the token was known (§2.2).
public struct RevocationRequest: Sendable, Equatable {
    public enum TokenTypeHint: String, Sendable, Equatable {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
    }

    public var token: String
    /// Only a hint: the caller should still search other token types (§2.1). Unknown
    /// hints are ignored.
    public var tokenTypeHint: TokenTypeHint?

    public static func parse(_ parameters: Parameters) throws(OAuthError) -> RevocationRequest {
        try parameters.rejectDuplicates(of: ["token", "token_type_hint"])
        return RevocationRequest(
            token: try parameters.required("token"),
            tokenTypeHint: try parameters.value("token_type_hint").flatMap(TokenTypeHint.init(rawValue:)))
    }
}
