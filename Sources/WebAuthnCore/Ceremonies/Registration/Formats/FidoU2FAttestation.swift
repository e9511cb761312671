import Crypto

/// `fido-u2f`: one P-256 attestation certificate whose key signed a U2F registration
/// message built from the WebAuthn data.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-fido-u2f-attestation
enum FidoU2FAttestation {
    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationTrust {
        let statement = input.statement
        // Step 1. x5c holds exactly one certificate; sig is present.
        let der = try certificateChain(in: statement, format: "fido-u2f")
        guard der.count == 1 else { throw .attestationInvalid("fido-u2f: x5c must hold exactly one certificate") }
        let sig = try statementSignature(in: statement, format: "fido-u2f")
        // U2F devices only ever create P-256 credentials.
        guard case .ec2P256(let x, let y) = input.credentialKey else {
            throw .attestationInvalid("fido-u2f: credential public key is not P-256")
        }
        let (_, chain) = try parsedCertificateChain(in: statement, format: "fido-u2f")
        // Step 2. The certificate's key is an EC key on P-256.
        guard case .p256 = try? chain.leaf.publicKey else {
            throw .attestationInvalid("fido-u2f: certificate key is not P-256")
        }
        // Steps 3-5. verificationData = 0x00 || rpIdHash || clientDataHash || credentialId || 0x04 || x || y.
        let verificationData: [UInt8] =
            [0x00] + input.authenticatorData.rpIDHash + input.clientDataHash + input.attested.credentialID
            + [0x04] + x + y
        // Step 6. sig is an ECDSA P-256 SHA-256 signature over it.
        guard chain.leaf.isValidSignature(sig, for: verificationData, algorithm: .ecdsaP256SHA256) else {
            throw .attestationInvalid("fido-u2f: signature does not verify with the attestation certificate")
        }
        // Step 7. Trust path.
        let verification = try assessCertificateChain(chain, input: input, format: "fido-u2f")
        return .basic(certificateChain: der, verification: verification)
    }
}
