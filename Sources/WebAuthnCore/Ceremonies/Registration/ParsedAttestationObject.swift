/// The attestation object decoded into its three members; no checks beyond shape.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-attestation
public struct ParsedAttestationObject: Sendable, Equatable {
    /// The attestation statement format identifier (`none`, `packed`, …).
    public var format: String
    /// The format-specific attestation statement (a CBOR map).
    public var statement: CBORValue
    public var authenticatorData: ParsedAuthenticatorData

    public init(from bytes: [UInt8]) throws(WebAuthnError) {
        let value: CBORValue
        do { value = try CBORDecoder().decode(bytes) } catch { throw .malformedCBOR(error) }
        guard value.mapValue != nil,
            let format = value[textKey: "fmt"]?.stringValue,
            let statement = value[textKey: "attStmt"], statement.mapValue != nil,
            let authData = value[textKey: "authData"]?.bytesValue
        else { throw .malformedAttestationObject }
        self.format = format
        self.statement = statement
        self.authenticatorData = try ParsedAuthenticatorData(from: authData)
    }
}
