/// The credential an authenticator attests to at registration.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-attested-credential-data
public struct AttestedCredentialData: Sendable, Equatable {
    /// The authenticator model's AAGUID (16 bytes, all zero when not disclosed).
    public var aaguid: [UInt8]
    /// The credential id, at most 1023 bytes.
    public var credentialID: [UInt8]
    /// The COSE_Key bytes exactly as the authenticator encoded them (what gets stored).
    public var credentialPublicKeyBytes: [UInt8]
    /// The same key, decoded.
    public var credentialPublicKey: CBORValue
}
