import Crypto

/// Apple's nonce rule for native sign-in: the app draws a random nonce, puts the SHA-256 of it
/// (lowercase hex) into `ASAuthorizationAppleIDRequest.nonce`, and Apple copies that value into
/// the identityToken's `nonce` claim. The app sends the raw nonce to this server, which hashes
/// it and compares: a token captured elsewhere cannot be replayed without the raw value, which
/// never left the app until this request.
public enum AppleNonce {
    /// Raw nonces shorter than this are too guessable to bind a token to one request.
    public static let minimumLength = 16
    public static let maximumLength = 512

    /// The value Apple puts into the token for `raw`.
    public static func hashed(_ raw: String) -> String {
        Hex.encode(SHA256.hash(data: Array(raw.utf8)))
    }

    /// Whether `raw` is acceptable as a nonce at all (length only; the value is the app's).
    public static func isWellFormed(_ raw: String) -> Bool {
        (minimumLength...maximumLength).contains(raw.utf8.count)
    }

    /// Whether the token's `nonce` claim is the hash of `raw` (constant time).
    public static func matches(raw: String, claim: String?) -> Bool {
        guard let claim else { return false }
        return constantTimeEquals(Array(hashed(raw).utf8), Array(claim.lowercased().utf8))
    }
}
