import COpenSSL
import Foundation

/// A secret key for HMAC and AES-GCM. Equality is constant-time.
public struct SymmetricKey: Sendable, Equatable {
    /// Common key sizes.
    public struct Size: Sendable, Equatable {
        public let bitCount: Int
        public init(bitCount: Int) { self.bitCount = bitCount }
        public static let bits128 = Size(bitCount: 128)
        public static let bits192 = Size(bitCount: 192)
        public static let bits256 = Size(bitCount: 256)
    }

    /// The key bytes. Exposed because keys are stored (encrypted) and configured as bytes.
    public let bytes: [UInt8]

    public init(bytes: some Sequence<UInt8>) { self.bytes = Array(bytes) }

    /// A fresh random key from the OpenSSL CSPRNG.
    public init(size: Size) { self.bytes = SecureRandom.bytes(count: size.bitCount / 8) }

    public var bitCount: Int { bytes.count * 8 }

    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        constantTimeEquals(lhs.bytes, rhs.bytes)
    }
}

/// An HMAC value; compare it with `==` (constant-time) rather than on raw bytes.
public struct HashedAuthenticationCode: Digest {
    public let bytes: [UInt8]
    public static func == (lhs: Self, rhs: Self) -> Bool { constantTimeEquals(lhs.bytes, rhs.bytes) }
}

/// HMAC (RFC 2104) over a SHA-2 hash.
public enum HMAC {
    public enum HashFunction: String, Sendable { case sha256 = "SHA256", sha384 = "SHA384", sha512 = "SHA512" }

    /// Computes the MAC. HMAC cannot fail for these built-in digests on valid memory;
    /// a failure means a broken OpenSSL installation and stops the process.
    public static func authenticationCode<D: DataProtocol>(
        for data: D, using key: SymmetricKey, hashFunction: HashFunction = .sha256
    ) -> HashedAuthenticationCode {
        // A zero-length buffer still needs an address: OpenSSL treats a NULL key as "no key".
        let message = Array(data)
        let keyBytes = key.bytes.isEmpty ? [0] : key.bytes
        let keyLength = key.bytes.count
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length = 0
        let result = keyBytes.withUnsafeBufferPointer { keyBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                EVP_Q_mac(
                    nil, "HMAC", nil, hashFunction.rawValue, nil,
                    keyBuffer.baseAddress, keyLength,
                    messageBuffer.baseAddress, messageBuffer.count,
                    &out, out.count, &length)
            }
        }
        precondition(result != nil, "OpenSSL HMAC-\(hashFunction.rawValue) unavailable")
        return HashedAuthenticationCode(bytes: Array(out.prefix(length)))
    }

    /// Verifies a MAC in constant time.
    public static func isValidAuthenticationCode<D: DataProtocol>(
        _ code: some DataProtocol, authenticating data: D, using key: SymmetricKey,
        hashFunction: HashFunction = .sha256
    ) -> Bool {
        constantTimeEquals(
            authenticationCode(for: data, using: key, hashFunction: hashFunction).bytes, Array(code))
    }
}
