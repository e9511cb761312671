import COpenSSL
import Foundation

/// Curve25519 signatures (Ed25519, RFC 8032): EdDSA in JOSE (RFC 8037), COSE -8.
public enum Curve25519 {
    public enum Signing {}
}

extension Curve25519.Signing {
    /// An Ed25519 private key (the 32-byte seed).
    public struct PrivateKey: Sendable {
        let key: PKey

        /// Generates a fresh key.
        public init() throws(CryptoError) { key = try PKey.generate("ED25519") }

        /// The 32-byte seed (JWK `d`).
        public init(rawRepresentation raw: some DataProtocol) throws(CryptoError) {
            let seed = Array(raw)
            guard seed.count == 32,
                let pointer = seed.withUnsafeBufferPointer({
                    EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count)
                })
            else {
                ERR_clear_error()
                throw .invalidKeyEncoding
            }
            key = PKey(taking: pointer)
        }

        /// PKCS#8 DER.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            let key = try PKey.privateFromDER(Array(der))
            guard key.isA("ED25519") else { throw .unsupportedKeyType }
            self.key = key
        }

        /// `PRIVATE KEY` PEM.
        public init(pemRepresentation pem: String) throws(CryptoError) {
            let document = try PEMDocument(parsing: pem)
            guard document.label == "PRIVATE KEY" else { throw .invalidPEM }
            try self.init(derRepresentation: document.der)
        }

        public var publicKey: PublicKey {
            // Taking the public half of a valid key cannot fail unless OpenSSL is broken.
            guard let pub = try? key.publicOnly() else { preconditionFailure("Ed25519 public key export failed") }
            return PublicKey(key: pub)
        }

        /// The 32-byte seed.
        public var rawRepresentation: [UInt8] {
            get throws(CryptoError) {
                var length = 32
                var out = [UInt8](repeating: 0, count: 32)
                guard EVP_PKEY_get_raw_private_key(key.pointer, &out, &length) == 1, length == 32 else {
                    throw openSSLFailure("EVP_PKEY_get_raw_private_key")
                }
                return out
            }
        }

        public var derRepresentation: [UInt8] { get throws(CryptoError) { try key.pkcs8DER() } }

        public var pemRepresentation: String {
            get throws(CryptoError) { PEMDocument(label: "PRIVATE KEY", der: try key.pkcs8DER()).text }
        }

        /// Signs `data` (PureEdDSA: deterministic, 64 bytes).
        public func signature(for data: some DataProtocol) throws(CryptoError) -> [UInt8] {
            try key.sign(Array(data), scheme: .ed25519)
        }
    }

    /// An Ed25519 public key.
    public struct PublicKey: Sendable {
        let key: PKey

        init(key: PKey) { self.key = key }

        /// The 32-byte encoded point (JWK `x`, COSE -2).
        public init(rawRepresentation raw: some DataProtocol) throws(CryptoError) {
            let bytes = Array(raw)
            guard bytes.count == 32,
                let pointer = bytes.withUnsafeBufferPointer({
                    EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count)
                })
            else {
                ERR_clear_error()
                throw .invalidKeyEncoding
            }
            key = PKey(taking: pointer)
        }

        /// SubjectPublicKeyInfo DER.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            let key = try PKey.publicFromSPKI(Array(der))
            guard key.isA("ED25519") else { throw .unsupportedKeyType }
            self.key = key
        }

        /// `PUBLIC KEY` PEM.
        public init(pemRepresentation pem: String) throws(CryptoError) {
            let document = try PEMDocument(parsing: pem)
            guard document.label == "PUBLIC KEY" else { throw .invalidPEM }
            try self.init(derRepresentation: document.der)
        }

        public var rawRepresentation: [UInt8] { get throws(CryptoError) { try Curve25519.rawPublic(key) } }

        public var derRepresentation: [UInt8] { get throws(CryptoError) { try key.spkiDER() } }

        public var pemRepresentation: String {
            get throws(CryptoError) { PEMDocument(label: "PUBLIC KEY", der: try key.spkiDER()).text }
        }

        /// Whether `signature` (64 bytes) is a valid Ed25519 signature of `data`.
        public func isValidSignature(_ signature: some DataProtocol, for data: some DataProtocol) -> Bool {
            let sig = Array(signature)
            guard sig.count == 64 else { return false }
            return key.verify(sig, for: Array(data), scheme: .ed25519)
        }
    }
}

extension Curve25519 {
    static func rawPublic(_ key: PKey) throws(CryptoError) -> [UInt8] {
        var length = 32
        var out = [UInt8](repeating: 0, count: 32)
        guard EVP_PKEY_get_raw_public_key(key.pointer, &out, &length) == 1, length == 32 else {
            throw openSSLFailure("EVP_PKEY_get_raw_public_key")
        }
        return out
    }
}
