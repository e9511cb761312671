import Crypto

/// The JWS algorithms this server signs and verifies (RFC 7518 §3, RFC 8037).
/// `none` and the HMAC algorithms are deliberately absent: tokens are only ever
/// verified with public keys.
public enum JWSAlgorithm: String, Codable, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case RS256
    /// RSASSA-PSS with SHA-256, MGF1-SHA-256 and a 32-byte salt.
    case PS256
    /// ECDSA on P-256 with SHA-256; the signature is raw `r || s`.
    case ES256
    /// Ed25519 (RFC 8037).
    case EdDSA

    /// The JWK `kty` a key for this algorithm must have.
    public var keyType: String {
        switch self {
        case .RS256, .PS256: return "RSA"
        case .ES256: return "EC"
        case .EdDSA: return "OKP"
        }
    }

    /// The JWK `crv` a key for this algorithm must have, if any.
    public var curve: String? {
        switch self {
        case .RS256, .PS256: return nil
        case .ES256: return "P-256"
        case .EdDSA: return "Ed25519"
        }
    }
}

/// A private key that can sign JWS objects.
public enum SigningPrivateKey: Sendable {
    case rsa(RSA.Signing.PrivateKey)
    case p256(P256.Signing.PrivateKey)
    case ed25519(Curve25519.Signing.PrivateKey)

    public var publicKey: SigningPublicKey {
        switch self {
        case .rsa(let key): return .rsa(key.publicKey)
        case .p256(let key): return .p256(key.publicKey)
        case .ed25519(let key): return .ed25519(key.publicKey)
        }
    }

    /// The JWS signature of `input` (the ASCII signing input).
    func sign(_ input: [UInt8], algorithm: JWSAlgorithm) throws(JOSEError) -> [UInt8] {
        do {
            switch (self, algorithm) {
            case (.rsa(let key), .RS256): return try key.signature(for: input, padding: .pkcs1v1_5).rawRepresentation
            case (.rsa(let key), .PS256): return try key.signature(for: input, padding: .pss).rawRepresentation
            case (.p256(let key), .ES256): return try key.signature(for: input).rawRepresentation
            case (.ed25519(let key), .EdDSA): return try key.signature(for: input)
            default: throw JOSEError.algorithmKeyMismatch
            }
        } catch let error as JOSEError {
            throw error
        } catch let error as CryptoError {
            throw .signingFailed(error)
        } catch {
            throw .signingFailed(.openSSLFailure("unexpected"))
        }
    }
}

/// A public key that can verify JWS objects.
public enum SigningPublicKey: Sendable {
    case rsa(RSA.Signing.PublicKey)
    case p256(P256.Signing.PublicKey)
    case ed25519(Curve25519.Signing.PublicKey)

    /// Whether this key may be used with `algorithm` (RS256/PS256 only RSA, ES256 only
    /// P-256, EdDSA only Ed25519).
    public func fits(_ algorithm: JWSAlgorithm) -> Bool {
        switch (self, algorithm) {
        case (.rsa, .RS256), (.rsa, .PS256), (.p256, .ES256), (.ed25519, .EdDSA): return true
        default: return false
        }
    }

    /// Verifies a JWS signature; a key that does not fit the algorithm never verifies.
    public func isValidSignature(_ signature: [UInt8], for input: [UInt8], algorithm: JWSAlgorithm) -> Bool {
        switch (self, algorithm) {
        case (.rsa(let key), .RS256):
            return key.isValidSignature(.init(rawRepresentation: signature), for: input, padding: .pkcs1v1_5)
        case (.rsa(let key), .PS256):
            return key.isValidSignature(.init(rawRepresentation: signature), for: input, padding: .pss)
        case (.p256(let key), .ES256):
            guard let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(raw, for: input)
        case (.ed25519(let key), .EdDSA):
            return key.isValidSignature(signature, for: input)
        default:
            return false
        }
    }
}
