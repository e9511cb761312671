import Crypto

/// Client secrets at rest: `$hmac-sha256$<salt b64url>$<mac b64url>` with
/// `mac = HMAC-SHA256(key: salt, message: secret)`.
///
/// Generated secrets carry 256 bits of entropy, so a fast keyed hash suffices (a slow
/// password hash would only slow down every token request); the salt keeps equal secrets
/// from having equal hashes.
public enum ClientSecret {
    static let prefix = "$hmac-sha256$"

    /// A new secret: 32 random bytes, base64url (43 characters).
    public static func generate() -> String { Base64URL.encode(SecureRandom.bytes(count: 32)) }

    /// A new random salt (16 bytes).
    public static func generateSalt() -> [UInt8] { SecureRandom.bytes(count: 16) }

    /// The hash string for `secret`, with a fresh salt unless one is given (tests).
    public static func hash(_ secret: String, salt: [UInt8] = generateSalt()) -> String {
        let mac = HMAC.authenticationCode(for: Array(secret.utf8), using: SymmetricKey(bytes: salt))
        return prefix + Base64URL.encode(salt) + "$" + Base64URL.encode(mac.bytes)
    }

    /// Whether `secret` matches `hash`, compared in constant time. A malformed hash never
    /// matches.
    public static func verify(_ secret: String, against hash: String) -> Bool {
        guard let (salt, expected) = parse(hash) else { return false }
        let mac = HMAC.authenticationCode(for: Array(secret.utf8), using: SymmetricKey(bytes: salt))
        return constantTimeEquals(mac.bytes, expected)
    }

    /// Whether `hash` has the form `hash(_:)` writes, so that some secret can match it: the
    /// configuration refuses anything else (a secret pasted in the clear would load, and then
    /// never authenticate).
    public static func isWellFormed(_ hash: String) -> Bool { parse(hash) != nil }

    private static func parse(_ hash: String) -> (salt: [UInt8], mac: [UInt8])? {
        guard hash.hasPrefix(prefix) else { return nil }
        let parts = hash.dropFirst(prefix.count).split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 2, let salt = try? Base64URL.decode(String(parts[0])), salt.count >= 16,
            let mac = try? Base64URL.decode(String(parts[1])), mac.count == 32
        else { return nil }
        return (salt, mac)
    }
}
