/// `apple` (anonymous attestation): structure only; the nonce extension and
/// the certificate's key need X.509 parsing.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-apple-anonymous-attestation
enum AppleAttestation {
    static func verify(statement: CBORValue) throws(WebAuthnError) -> AttestationTrust {
        let chain = try certificateChain(in: statement, format: "apple")
        return .basic(certificateChain: chain, verification: .unverified)
    }
}
