/// `tpm`: structure only (version, certInfo, pubArea, x5c); verifying needs the
/// AIK certificate's key and its TCG extensions, i.e. X.509 parsing.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-tpm-attestation
enum TPMAttestation {
    static func verify(statement: CBORValue) throws(WebAuthnError) -> AttestationTrust {
        guard statement[textKey: "ver"]?.stringValue == "2.0" else { throw .attestationInvalid("tpm: ver is not 2.0") }
        _ = try statementAlgorithm(in: statement, format: "tpm")
        _ = try statementSignature(in: statement, format: "tpm")
        guard let certInfo = statement[textKey: "certInfo"]?.bytesValue, !certInfo.isEmpty else {
            throw .attestationInvalid("tpm: certInfo missing")
        }
        guard let pubArea = statement[textKey: "pubArea"]?.bytesValue, !pubArea.isEmpty else {
            throw .attestationInvalid("tpm: pubArea missing")
        }
        // ECDAA (`ecdaaKeyId`) was removed from Level 3.
        guard statement[textKey: "ecdaaKeyId"] == nil else { throw .attestationInvalid("tpm: ECDAA not supported") }
        let chain = try certificateChain(in: statement, format: "tpm")
        return .basic(certificateChain: chain, verification: .unverified)
    }
}
