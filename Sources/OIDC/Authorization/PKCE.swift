import Crypto

/// Proof Key for Code Exchange (RFC 7636), S256 only (`plain` offers no protection
/// against a leaked authorization request, RFC 9700 §2.1.1).
public enum PKCE {
    /// Checks `code_challenge` / `code_challenge_method` of an authorization request and
    /// returns the challenge to store with the code (nil when the client is exempt and
    /// sent none).
    public static func validateChallenge(
        _ challenge: String?, method: String?, required: Bool
    ) throws(OAuthError) -> String? {
        guard let challenge else {
            if method != nil {
                throw .invalidRequest(
                    "The 'code_challenge_method' parameter was sent without 'code_challenge'.")
            }
            if required {
                throw .invalidRequest("PKCE is required: the 'code_challenge' parameter is missing.")
            }
            return nil
        }
        switch method {
        case "S256": break
        case nil:
            throw .invalidRequest(
                "The 'code_challenge_method' parameter is missing; only 'S256' is supported.")
        case "plain": throw .invalidRequest("The 'code_challenge_method' 'plain' is not allowed; use 'S256'.")
        default: throw .invalidRequest("The 'code_challenge_method' is not supported; use 'S256'.")
        }
        // BASE64URL(SHA-256(verifier)) is always 43 characters decoding to 32 bytes.
        guard challenge.utf8.count == 43, let bytes = try? Base64URL.decode(challenge), bytes.count == 32
        else {
            throw .invalidRequest(
                "The 'code_challenge' must be the 43-character base64url SHA-256 of the verifier.")
        }
        return challenge
    }

    /// The S256 challenge of `verifier` (for clients and tests).
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)).bytes)
    }

    /// Checks a token request's `code_verifier` against the challenge stored with the
    /// code (RFC 7636 §4.6). A verifier without a stored challenge is refused too, so
    /// that a client cannot be downgraded silently (OAuth 2.1 §4.1.3).
    public static func verify(verifier: String?, challenge: String?) throws(OAuthError) {
        guard let challenge else {
            if verifier != nil {
                throw .invalidGrant(
                    "A 'code_verifier' was sent but the authorization request had no 'code_challenge'.")
            }
            return
        }
        guard let verifier else { throw .invalidGrant("The 'code_verifier' parameter is missing.") }
        guard (43...128).contains(verifier.utf8.count),
            verifier.utf8.allSatisfy({ FormEncoding.isUnreserved($0) })
        else { throw .invalidRequest("The 'code_verifier' must be 43 to 128 unreserved characters.") }
        guard constantTimeEquals(Array(Self.challenge(for: verifier).utf8), Array(challenge.utf8)) else {
            throw .invalidGrant("The 'code_verifier' does not match the 'code_challenge'.")
        }
    }
}
