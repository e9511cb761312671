/// `android-key`: structure only; the key description extension and the
/// certificate's key need X.509 parsing.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-android-key-attestation
enum AndroidKeyAttestation {
    static func verify(statement: CBORValue) throws(WebAuthnError) -> AttestationTrust {
        // alg names the attestation key's algorithm (the leaf certificate's), not the credential's.
        _ = try statementAlgorithm(in: statement, format: "android-key")
        _ = try statementSignature(in: statement, format: "android-key")
        let chain = try certificateChain(in: statement, format: "android-key")
        return .basic(certificateChain: chain, verification: .unverified)
    }
}
