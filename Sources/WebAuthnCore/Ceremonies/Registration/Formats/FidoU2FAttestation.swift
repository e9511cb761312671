/// `fido-u2f`: structure only (one certificate and a signature over a U2F
/// registration message); the signature needs the certificate's P-256 key.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-fido-u2f-attestation
enum FidoU2FAttestation {
    static func verify(statement: CBORValue, credentialKey: COSEKey) throws(WebAuthnError) -> AttestationTrust {
        let chain = try certificateChain(in: statement, format: "fido-u2f")
        guard chain.count == 1 else { throw .attestationInvalid("fido-u2f: x5c must hold exactly one certificate") }
        _ = try statementSignature(in: statement, format: "fido-u2f")
        // U2F devices only ever create P-256 credentials.
        guard case .ec2P256 = credentialKey else {
            throw .attestationInvalid("fido-u2f: credential public key is not P-256")
        }
        return .basic(certificateChain: chain, verification: .unverified)
    }
}
