/// `packed`: self attestation (signed with the credential key) is verified fully;
/// with `x5c` the structure is checked and the chain reported as unverified.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-packed-attestation
enum PackedAttestation {
    static func verify(
        statement: CBORValue, authenticatorData: ParsedAuthenticatorData, credentialKey: COSEKey,
        clientDataHash: [UInt8]
    ) throws(WebAuthnError) -> AttestationTrust {
        // Syntax: {alg, sig, x5c?}; no other members are defined.
        let alg = try statementAlgorithm(in: statement, format: "packed")
        let sig = try statementSignature(in: statement, format: "packed")
        let signedData = authenticatorData.rawBytes + clientDataHash

        if statement[textKey: "x5c"] != nil {
            // Attestation certificate: verifying sig needs the leaf's public key and
            // the certificate requirements of §8.2.1, i.e. X.509 parsing.
            let chain = try certificateChain(in: statement, format: "packed")
            return .basic(certificateChain: chain, verification: .unverified)
        }

        // Self attestation: alg matches the credential key's algorithm ...
        guard alg == credentialKey.algorithm else {
            throw .attestationInvalid("packed: alg does not match the credential public key")
        }
        // ... and sig verifies over authenticatorData || clientDataHash with that key.
        guard credentialKey.isValidSignature(sig, for: signedData) else {
            throw .attestationInvalid("packed: self-attestation signature does not verify")
        }
        return .selfAttestation
    }
}
