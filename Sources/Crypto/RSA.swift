import COpenSSL
import Foundation

/// RSA signatures: RS256 (PKCS#1 v1.5) and PS256 (PSS) in JOSE, COSE -257 / -37 in WebAuthn.
public enum RSA {
    public enum Signing {}

    /// Keys below this size are refused everywhere (NIST SP 800-131A).
    public static let minimumKeySize = 2048
}

extension RSA.Signing {
    /// The signature padding scheme.
    public enum Padding: Sendable, Equatable {
        /// RSASSA-PKCS1-v1_5 (deterministic).
        case pkcs1v1_5
        /// RSASSA-PSS with MGF1 over the same digest and a salt as long as the digest.
        case pss
    }

    /// The message digest signed.
    public enum Digest: String, Sendable, Equatable {
        case sha256 = "SHA256", sha384 = "SHA384", sha512 = "SHA512"
    }

    /// An RSA signature, as long as the modulus.
    public struct RSASignature: Sendable, Equatable {
        public let rawRepresentation: [UInt8]
        public init(rawRepresentation: some DataProtocol) { self.rawRepresentation = Array(rawRepresentation) }
    }

    /// The private components as unsigned big-endian integers (JWK `d`, `p`, `q`, `dp`, `dq`, `qi`).
    public struct PrivateComponents: Sendable, Equatable {
        public var n, e, d, p, q, dp, dq, qi: [UInt8]
        public init(n: [UInt8], e: [UInt8], d: [UInt8], p: [UInt8], q: [UInt8], dp: [UInt8], dq: [UInt8], qi: [UInt8]) {
            self.n = n; self.e = e; self.d = d; self.p = p; self.q = q; self.dp = dp; self.dq = dq; self.qi = qi
        }
    }

    /// An RSA private key of at least 2048 bits.
    public struct PrivateKey: Sendable {
        let key: PKey

        /// Generates a key with e = 65537. Generation of 4096-bit keys takes seconds.
        public init(keySize: Int = 2048) throws(CryptoError) {
            guard (RSA.minimumKeySize...8192).contains(keySize) else {
                throw keySize < RSA.minimumKeySize ? .keyTooSmall : .invalidParameter("keySize")
            }
            key = try PKey.generate("RSA") { ctx in EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(keySize)) }
        }

        /// Parses PKCS#8 or PKCS#1 (`RSAPrivateKey`) DER.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            key = try RSA.requireRSA(PKey.privateFromDER(Array(der)))
            guard key.checkPair() else { throw .invalidKeyEncoding }
        }

        /// Parses `PRIVATE KEY` or `RSA PRIVATE KEY` PEM.
        public init(pemRepresentation pem: String) throws(CryptoError) {
            let document = try PEMDocument(parsing: pem)
            guard document.label == "PRIVATE KEY" || document.label == "RSA PRIVATE KEY" else { throw .invalidPEM }
            try self.init(derRepresentation: document.der)
        }

        /// Builds a key from its components (a private JWK), checking they are consistent.
        public init(components c: PrivateComponents) throws(CryptoError) {
            let parts: [(String, [UInt8])] = [
                ("n", c.n), ("e", c.e), ("d", c.d), ("rsa-factor1", c.p), ("rsa-factor2", c.q),
                ("rsa-exponent1", c.dp), ("rsa-exponent2", c.dq), ("rsa-coefficient1", c.qi),
            ]
            let key = try RSA.build(parts, selection: copenssl_selection_keypair())
            guard key.checkPair() else { throw .invalidKeyEncoding }
            self.key = try RSA.requireRSA(key)
        }

        public var publicKey: PublicKey {
            // Taking the public half of a valid key cannot fail unless OpenSSL is broken.
            guard let pub = try? key.publicOnly() else { preconditionFailure("RSA public key export failed") }
            return PublicKey(key: pub)
        }

        public var keySizeInBits: Int { key.bits }

        /// The private components (for exporting a private JWK).
        public var components: PrivateComponents {
            get throws(CryptoError) {
                try PrivateComponents(
                    n: key.bigNumberParameter("n"), e: key.bigNumberParameter("e"),
                    d: key.bigNumberParameter("d"), p: key.bigNumberParameter("rsa-factor1"),
                    q: key.bigNumberParameter("rsa-factor2"), dp: key.bigNumberParameter("rsa-exponent1"),
                    dq: key.bigNumberParameter("rsa-exponent2"), qi: key.bigNumberParameter("rsa-coefficient1"))
            }
        }

        /// PKCS#8 DER.
        public var derRepresentation: [UInt8] { get throws(CryptoError) { try key.pkcs8DER() } }

        /// PKCS#8 PEM (`PRIVATE KEY`).
        public var pemRepresentation: String {
            get throws(CryptoError) { PEMDocument(label: "PRIVATE KEY", der: try key.pkcs8DER()).text }
        }

        /// Signs `data` (hashed with `digest` inside).
        public func signature(
            for data: some DataProtocol, padding: Padding = .pkcs1v1_5, digest: Digest = .sha256
        ) throws(CryptoError) -> RSASignature {
            let bytes = try key.sign(Array(data), scheme: RSA.scheme(padding, digest))
            return RSASignature(rawRepresentation: bytes)
        }
    }

    /// An RSA public key of at least 2048 bits.
    public struct PublicKey: Sendable {
        let key: PKey

        init(key: PKey) { self.key = key }

        /// Modulus and public exponent as unsigned big-endian bytes (JWK `n`/`e`, COSE -1/-2).
        public init(n: some DataProtocol, e: some DataProtocol) throws(CryptoError) {
            let n = Array(n.drop { $0 == 0 }), e = Array(e.drop { $0 == 0 })
            guard !n.isEmpty, !e.isEmpty, e.count <= 8 else { throw .invalidKeyEncoding }
            guard n.count * 8 - n[0].leadingZeroBitCount >= RSA.minimumKeySize else { throw .keyTooSmall }
            // No EVP_PKEY_public_check here: its primality test of n costs more than
            // several verifications, and verifying with a malformed modulus simply fails.
            key = try RSA.requireRSA(RSA.build([("n", n), ("e", e)], selection: copenssl_selection_public_key()))
        }

        /// SubjectPublicKeyInfo DER, or a bare PKCS#1 `RSAPublicKey`.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            let bytes = Array(der)
            let parsed: PKey
            do {
                parsed = try PKey.publicFromSPKI(bytes)
            } catch {
                parsed = try PKey.rsaPublicFromPKCS1(bytes)
            }
            key = try RSA.requireRSA(parsed)
        }

        /// `PUBLIC KEY` (SPKI) or `RSA PUBLIC KEY` (PKCS#1) PEM.
        public init(pemRepresentation pem: String) throws(CryptoError) {
            let document = try PEMDocument(parsing: pem)
            switch document.label {
            case "PUBLIC KEY": key = try RSA.requireRSA(PKey.publicFromSPKI(document.der))
            case "RSA PUBLIC KEY": key = try RSA.requireRSA(PKey.rsaPublicFromPKCS1(document.der))
            default: throw .invalidPEM
            }
        }

        /// The modulus, unsigned big-endian without leading zeros.
        public var modulus: [UInt8] { get throws(CryptoError) { try key.bigNumberParameter("n") } }
        /// The public exponent, unsigned big-endian without leading zeros.
        public var exponent: [UInt8] { get throws(CryptoError) { try key.bigNumberParameter("e") } }
        public var keySizeInBits: Int { key.bits }

        /// SubjectPublicKeyInfo DER.
        public var derRepresentation: [UInt8] { get throws(CryptoError) { try key.spkiDER() } }

        /// `PUBLIC KEY` PEM.
        public var pemRepresentation: String {
            get throws(CryptoError) { PEMDocument(label: "PUBLIC KEY", der: try key.spkiDER()).text }
        }

        /// Whether `signature` is valid for `data` under this key, padding and digest.
        public func isValidSignature(
            _ signature: RSASignature, for data: some DataProtocol,
            padding: Padding = .pkcs1v1_5, digest: Digest = .sha256
        ) -> Bool {
            key.verify(signature.rawRepresentation, for: Array(data), scheme: RSA.scheme(padding, digest))
        }
    }
}

extension RSA {
    /// Refuses non-RSA keys (including RSA-PSS-restricted keys), keys below 2048 bits, and
    /// public exponents that are not odd and at least 3 (RFC 8017 §3.1): with e = 1 the message
    /// itself is a valid signature for anyone to make.
    static func requireRSA(_ key: PKey) throws(CryptoError) -> PKey {
        guard key.isA("RSA") else { throw .unsupportedKeyType }
        guard key.bits >= minimumKeySize else { throw .keyTooSmall }
        let e = try key.bigNumberParameter("e")
        guard let last = e.last, last & 1 == 1, e.count > 1 || last >= 3 else { throw .invalidKeyEncoding }
        return key
    }

    static func build(_ parts: [(String, [UInt8])], selection: Int32) throws(CryptoError) -> PKey {
        var numbers: [OpaquePointer] = []
        defer { numbers.forEach { BN_clear_free($0) } }
        for (_, bytes) in parts {
            guard !bytes.isEmpty, let bn = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) })
            else { throw .invalidKeyEncoding }
            numbers.append(bn)
        }
        return try PKey.fromData("RSA", selection: selection) { builder in
            for (index, (name, _)) in parts.enumerated() {
                guard builder.push(name, bigNumber: numbers[index]) else { return false }
            }
            return true
        }
    }

    static func scheme(_ padding: Signing.Padding, _ digest: Signing.Digest) -> SignatureScheme {
        let name: FetchedDigest.Name =
            switch digest {
            case .sha256: .sha256
            case .sha384: .sha384
            case .sha512: .sha512
            }
        return SignatureScheme(digest: name, padding: padding == .pss ? .pss : .pkcs1)
    }
}
