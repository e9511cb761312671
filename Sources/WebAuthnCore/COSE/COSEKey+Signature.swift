import Crypto

extension COSEKey {
    /// Checks `signature` over `data` with this key under its declared algorithm.
    ///
    /// ES256 signatures are DER (as WebAuthn specifies), EdDSA signatures are the
    /// raw 64 bytes, RSA signatures are the raw modulus-sized block. A key that the
    /// crypto layer refuses (off-curve point, short RSA modulus) never verifies.
    /// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-signature-attestation-types
    public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch self {
        case .ec2P256(let x, let y):
            return P256.Signing.isValidSignature(
                derRepresentation: signature, for: data, publicKeyPoint: [0x04] + x + y)
        case .okpEd25519(let x):
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else { return false }
            return key.isValidSignature(signature, for: data)
        case .rsa(let n, let e, let algorithm):
            guard let key = try? RSA.Signing.PublicKey(n: n, e: e) else { return false }
            let padding: RSA.Signing.Padding = algorithm == .ps256 ? .pss : .pkcs1v1_5
            return key.isValidSignature(
                RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: padding, digest: .sha256)
        }
    }
}
