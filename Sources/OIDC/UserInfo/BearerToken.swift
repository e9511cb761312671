/// Bearer token extraction (RFC 6750 §2) and the `WWW-Authenticate` challenges (§3).
public enum BearerToken {
    /// The access token from the `Authorization: Bearer` header (§2.1) or, for a POST with
    /// `application/x-www-form-urlencoded` content, the `access_token` body parameter
    /// (§2.2). The query (§2.3) is refused: URIs end up in logs and `Referer` headers.
    /// Using more than one method is an error (§2).
    ///
    /// - Returns: nil when no token was presented at all (answer 401 with
    ///   `challenge(realm:error:)` and no error code).
    /// - Throws: `invalid_request` (400) for a malformed header, several methods, or a token
    ///   in the query.
    public static func extract(
        authorization: String?, method: String, contentType: String?, body: Parameters?, query: Parameters?
    ) throws(OAuthError) -> String? {
        if let query, query.contains("access_token") {
            throw .invalidRequest("Send the access token in the Authorization header, not in the query.")
        }
        var fromHeader: String?
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            if parts.first?.lowercased() == "bearer" {
                guard parts.count == 2, isB64Token(parts[1]) else {
                    throw .invalidRequest("The Authorization header is not a valid Bearer credential.")
                }
                fromHeader = String(parts[1])
            }
        }
        var fromBody: String?
        let isForm =
            contentType.map { $0.lowercased().hasPrefix("application/x-www-form-urlencoded") } ?? false
        if method.uppercased() == "POST", isForm, let body {
            fromBody = try body.value("access_token")
        }
        if fromHeader != nil && fromBody != nil {
            throw .invalidRequest("Send the access token by exactly one method.")
        }
        return fromHeader ?? fromBody
    }

    /// The access token of an `Authorization: DPoP <token>` header (RFC 9449 §7.1), nil for any
    /// other scheme or no header. Sending the token in the body as well is ambiguous, refused.
    public static func extractDPoP(authorization: String?, body: Parameters?, query: Parameters? = nil)
        throws(OAuthError) -> String?
    {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.first?.lowercased() == "dpop" else { return nil }
        guard parts.count == 2, isB64Token(parts[1]) else {
            throw .invalidRequest("The Authorization header is not a valid DPoP credential.")
        }
        if body?.contains("access_token") == true || query?.contains("access_token") == true {
            throw .invalidRequest("Send the access token by exactly one method.")
        }
        return String(parts[1])
    }

    /// `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="` (§2.1).
    static func isB64Token(_ token: some StringProtocol) -> Bool {
        let body = token.utf8.reversed().drop { $0 == UInt8(ascii: "=") }
        guard !body.isEmpty else { return false }
        return body.allSatisfy {
            FormEncoding.isUnreserved($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/")
        }
    }

    /// The `WWW-Authenticate` value for a refused request, e.g.
    /// `Bearer realm="…", error="invalid_token", error_description="…"`. Without an error
    /// (no token presented) only the realm is sent (§3.1). `scope` names the scope needed,
    /// for `insufficient_scope`.
    public static func challenge(realm: String, error: OAuthError? = nil, scope: String? = nil) -> String {
        var parts = ["realm=\"\(quoted(realm))\""]
        if let error {
            parts.append("error=\"\(error.error)\"")
            parts.append("error_description=\"\(error.errorDescription)\"")
        }
        if let scope { parts.append("scope=\"\(quoted(scope))\"") }
        return "Bearer " + parts.joined(separator: ", ")
    }

    /// An expired, revoked, malformed or otherwise unusable token (401).
    public static func invalidToken(_ hint: String = "", debug: String? = nil) -> OAuthError {
        OAuthError(.invalidToken, hint: hint, debug: debug)
    }

    /// The token lacks the scope this resource needs (403).
    public static func insufficientScope(_ hint: String = "") -> OAuthError {
        OAuthError(.insufficientScope, hint: hint)
    }

    private static func quoted(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter {
                    $0.value >= 0x20 && $0.value <= 0x7E && $0 != "\"" && $0 != "\\"
                }))
    }
}
