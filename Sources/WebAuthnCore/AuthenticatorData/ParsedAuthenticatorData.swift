/// Authenticator data decoded from its bytes; no policy is applied here.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data
public struct ParsedAuthenticatorData: Sendable, Equatable {
    /// Longest credential id the specification allows.
    public static let maxCredentialIDLength = 1023

    /// SHA-256 of the RP ID the authenticator scoped the credential to.
    public var rpIDHash: [UInt8]
    public var flags: AuthenticatorFlags
    public var signCount: UInt32
    /// Present exactly when the AT flag is set.
    public var attestedCredentialData: AttestedCredentialData?
    /// Present exactly when the ED flag is set.
    public var extensions: CBORValue?
    /// The bytes the data was parsed from (signed over by the authenticator).
    public var rawBytes: [UInt8]

    /// Decodes authenticator data; every byte must be accounted for.
    public init(from bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= 37 else { throw .malformedAuthenticatorData }
        rawBytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = AuthenticatorFlags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
        var offset = 37

        if flags.contains(.attestedCredentialData) {
            guard bytes.count - offset >= 18 else { throw .malformedAuthenticatorData }
            let aaguid = Array(bytes[offset..<offset + 16])
            let idLength = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard idLength <= Self.maxCredentialIDLength else { throw .credentialIDTooLong }
            guard bytes.count - offset >= idLength else { throw .malformedAuthenticatorData }
            let credentialID = Array(bytes[offset..<offset + idLength])
            offset += idLength
            let rest = Array(bytes[offset...])
            let key: CBORValue
            let used: Int
            do { (key, used) = try CBORDecoder().decodePrefix(rest) } catch { throw .malformedCBOR(error) }
            guard key.mapValue != nil else { throw .invalidCredentialPublicKey }
            attestedCredentialData = AttestedCredentialData(
                aaguid: aaguid, credentialID: credentialID,
                credentialPublicKeyBytes: Array(rest[0..<used]), credentialPublicKey: key)
            offset += used
        } else {
            attestedCredentialData = nil
        }

        if flags.contains(.extensionData) {
            let rest = Array(bytes[offset...])
            let map: CBORValue
            let used: Int
            do { (map, used) = try CBORDecoder().decodePrefix(rest) } catch { throw .malformedCBOR(error) }
            guard map.mapValue != nil else { throw .malformedAuthenticatorData }
            extensions = map
            offset += used
        } else {
            extensions = nil
        }

        guard offset == bytes.count else { throw .malformedAuthenticatorData }
    }
}
