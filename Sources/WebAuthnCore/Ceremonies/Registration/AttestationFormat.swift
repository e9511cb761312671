/// The attestation statement formats this library recognises.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-defined-attestation-formats
public enum AttestationFormat: String, Sendable, CaseIterable {
    case none
    case packed
    case fidoU2F = "fido-u2f"
    case apple
    case androidKey = "android-key"
    case tpm

    /// Runs the format's verification procedure (registration step 22).
    func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationTrust {
        switch self {
        case .none: try NoneAttestation.verify(statement: input.statement)
        case .packed: try PackedAttestation.verify(input)
        case .fidoU2F: try FidoU2FAttestation.verify(input)
        case .apple: try AppleAttestation.verify(input)
        case .androidKey: try AndroidKeyAttestation.verify(input)
        case .tpm: try TPMAttestation.verify(input)
        }
    }
}

/// Reads `x5c`: a non-empty array of DER certificates, leaf first.
func certificateChain(in statement: CBORValue, format: String) throws(WebAuthnError) -> [[UInt8]] {
    guard let items = statement[textKey: "x5c"]?.arrayValue, !items.isEmpty else {
        throw .attestationInvalid("\(format): x5c missing or empty")
    }
    var chain: [[UInt8]] = []
    for item in items {
        guard let der = item.bytesValue, !der.isEmpty else {
            throw .attestationInvalid("\(format): x5c entry is not a certificate")
        }
        chain.append(der)
    }
    return chain
}

/// Reads `alg` and checks it names the credential's own algorithm where the format requires it.
func statementAlgorithm(in statement: CBORValue, format: String) throws(WebAuthnError) -> COSEAlgorithmIdentifier {
    guard let alg = statement[textKey: "alg"]?.intValue else { throw .attestationInvalid("\(format): alg missing") }
    return COSEAlgorithmIdentifier(rawValue: alg)
}

/// Reads `sig` as a non-empty byte string.
func statementSignature(in statement: CBORValue, format: String) throws(WebAuthnError) -> [UInt8] {
    guard let sig = statement[textKey: "sig"]?.bytesValue, !sig.isEmpty else {
        throw .attestationInvalid("\(format): sig missing")
    }
    return sig
}
