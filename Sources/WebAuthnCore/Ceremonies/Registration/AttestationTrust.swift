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
    /// The attestation signature and the format's certificate requirements were verified,
    /// but no trust anchor was configured for the format or AAGUID, so nothing ties the
    /// certificates to a known manufacturer: treat the AAGUID as a claim, as with `none`.
    case unverified
    /// Signature, certificate requirements and chain verified up to a configured trust anchor.
    case verifiedAgainstRoot
}
