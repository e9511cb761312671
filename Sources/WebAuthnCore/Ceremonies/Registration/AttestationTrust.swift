/// What the attestation statement established about the authenticator.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-attestation-types
public enum AttestationTrust: Sendable, Equatable {
    /// No attestation (`none`): nothing is known about the authenticator model.
    case none
    /// Self attestation: the credential key signed its own registration; this proves
    /// possession of the private key but nothing about the model.
    case selfAttestation
    /// An attestation certificate chain (leaf first, DER) was presented.
    case basic(certificateChain: [[UInt8]], verification: CertificateChainVerification)
}

/// How far an attestation certificate chain was checked.
public enum CertificateChainVerification: Sendable, Equatable {
    /// The format's structure was checked, but neither the attestation signature nor
    /// the chain: the AAGUID and certificates must be treated as claims, as with `none`.
    case unverified
    /// Signature and chain verified up to a trusted root.
    case verifiedAgainstRoot
}
