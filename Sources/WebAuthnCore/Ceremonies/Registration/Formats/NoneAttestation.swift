/// `none`: the statement is an empty map and conveys nothing.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-none-attestation
enum NoneAttestation {
    static func verify(statement: CBORValue) throws(WebAuthnError) -> AttestationTrust {
        guard statement.mapValue?.isEmpty == true else { throw .attestationInvalid("none: attStmt is not empty") }
        return .none
    }
}
