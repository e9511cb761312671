/// A credential public key decoded from its COSE_Key form.
///
/// Only the key types and algorithms this relying party can verify are
/// representable; everything else is `WebAuthnError.unsupportedAlgorithm`.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-encoded-credPubKey-examples
/// - SeeAlso: https://www.rfc-editor.org/rfc/rfc9053#section-7
public enum COSEKey: Sendable, Equatable {
    /// kty 2 (EC2), crv 1 (P-256), alg -7: uncompressed coordinates of 32 bytes each.
    case ec2P256(x: [UInt8], y: [UInt8])
    /// kty 3 (RSA), alg -257 or -37: big-endian modulus and exponent.
    case rsa(n: [UInt8], e: [UInt8], algorithm: COSEAlgorithmIdentifier)
    /// kty 1 (OKP), crv 6 (Ed25519), alg -8: the 32-byte public key.
    case okpEd25519(x: [UInt8])

    /// The algorithm the key declares (and is restricted to).
    public var algorithm: COSEAlgorithmIdentifier {
        switch self {
        case .ec2P256: .es256
        case .rsa(_, _, let algorithm): algorithm
        case .okpEd25519: .eddsa
        }
    }

    /// Decodes a COSE_Key from its CBOR bytes (exactly one item, nothing after it).
    public init(cbor bytes: [UInt8]) throws(WebAuthnError) {
        let value: CBORValue
        do { value = try CBORDecoder().decode(bytes) } catch { throw .malformedCBOR(error) }
        try self.init(cbor: value)
    }

    /// Decodes a COSE_Key from an already decoded CBOR map.
    public init(cbor value: CBORValue) throws(WebAuthnError) {
        guard value.mapValue != nil else { throw .invalidCredentialPublicKey }
        guard let kty = value[intKey: 1]?.intValue, let alg = value[intKey: 3]?.intValue else {
            throw .invalidCredentialPublicKey
        }
        let algorithm = COSEAlgorithmIdentifier(rawValue: alg)
        switch (kty, algorithm) {
        case (2, .es256):
            guard value[intKey: -1]?.intValue == 1 else { throw .unsupportedAlgorithm }
            guard let x = value[intKey: -2]?.bytesValue, let y = value[intKey: -3]?.bytesValue,
                x.count == 32, y.count == 32
            else { throw .invalidCredentialPublicKey }
            self = .ec2P256(x: x, y: y)
        case (3, .rs256), (3, .ps256):
            guard let n = value[intKey: -1]?.bytesValue, let e = value[intKey: -2]?.bytesValue,
                !n.isEmpty, !e.isEmpty, n.count <= 1024, e.count <= 8
            else { throw .invalidCredentialPublicKey }
            self = .rsa(n: n, e: e, algorithm: algorithm)
        case (1, .eddsa):
            guard value[intKey: -1]?.intValue == 6 else { throw .unsupportedAlgorithm }
            guard let x = value[intKey: -2]?.bytesValue, x.count == 32 else {
                throw .invalidCredentialPublicKey
            }
            self = .okpEd25519(x: x)
        default:
            throw .unsupportedAlgorithm
        }
    }

    /// The canonical COSE_Key encoding of this key (what a test authenticator emits).
    public var cbor: CBORValue {
        switch self {
        case .ec2P256(let x, let y):
            .map([
                CBORMapEntry(.int(1), .int(2)), CBORMapEntry(.int(3), .int(-7)),
                CBORMapEntry(.int(-1), .int(1)), CBORMapEntry(.int(-2), .byteString(x)),
                CBORMapEntry(.int(-3), .byteString(y)),
            ])
        case .rsa(let n, let e, let algorithm):
            .map([
                CBORMapEntry(.int(1), .int(3)), CBORMapEntry(.int(3), .int(algorithm.rawValue)),
                CBORMapEntry(.int(-1), .byteString(n)), CBORMapEntry(.int(-2), .byteString(e)),
            ])
        case .okpEd25519(let x):
            .map([
                CBORMapEntry(.int(1), .int(1)), CBORMapEntry(.int(3), .int(-8)),
                CBORMapEntry(.int(-1), .int(6)), CBORMapEntry(.int(-2), .byteString(x)),
            ])
        }
    }
}
