import Crypto

/// Makes authorization codes, refresh tokens, opaque access tokens and `jti` values:
/// 256 random bits, base64url (43 characters). Injected so tests can be deterministic.
public struct TokenGenerator: Sendable {
    private let randomBytes: @Sendable (Int) -> [UInt8]

    public init(randomBytes: @escaping @Sendable (Int) -> [UInt8]) { self.randomBytes = randomBytes }

    /// Backed by OpenSSL's CSPRNG.
    public static let live = TokenGenerator { SecureRandom.bytes(count: $0) }

    /// A new 256-bit value.
    public func next() -> String { Base64URL.encode(randomBytes(32)) }
}

/// What is stored instead of a code or token, so a database leak does not hand out
/// usable credentials; lookups hash the presented value the same way.
public enum TokenDigest {
    /// Lowercase hex SHA-256 of the token's UTF-8 bytes.
    public static func sha256(_ token: String) -> String { SHA256.hash(data: Array(token.utf8)).hex }
}
