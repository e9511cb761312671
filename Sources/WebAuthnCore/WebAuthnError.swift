import Crypto

/// Why a WebAuthn response was refused: one case per verification step, so the
/// caller can log `reason=<case>` and tests can expect the exact failure.
///
/// Descriptions name the failed check; they carry no secrets and no input bytes.
public enum WebAuthnError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A base64url field of the JSON response is not strict unpadded base64url.
    case invalidBase64URL(field: String)
    /// The attestation object or a COSE key is not acceptable CBOR.
    case malformedCBOR(CBORError)
    /// `clientDataJSON` is not UTF-8 JSON with the required members.
    case malformedClientData
    /// Authenticator data is too short, too long, or inconsistent with its flags.
    case malformedAuthenticatorData
    /// The attestation object lacks `fmt`, `authData` or `attStmt`, or has the wrong types.
    case malformedAttestationObject
    /// The COSE key's structure is wrong for its key type (missing or mis-sized members).
    case invalidCredentialPublicKey
    /// `type` is not `"public-key"`.
    case credentialTypeInvalid
    /// `id`, `rawId`, the attested credential id and the stored id disagree.
    case credentialIDMismatch
    /// The attested credential id is longer than 1023 bytes.
    case credentialIDTooLong
    /// `C.type` is not the ceremony's type (`webauthn.create` / `webauthn.get`).
    case clientDataTypeMismatch
    /// `C.challenge` is not the challenge issued for this ceremony.
    case challengeMismatch
    /// `C.origin` is not one of the relying party's origins.
    case originNotAllowed
    /// `C.crossOrigin` is true, which this relying party never expects.
    case crossOriginNotAllowed
    /// `C.topOrigin` is present, which this relying party never expects.
    case topOriginNotAllowed
    /// `rpIdHash` is not SHA-256 of the relying party id.
    case rpIDHashMismatch
    /// UP is not set although the ceremony requires user presence.
    case userPresentFlagNotSet
    /// UV is not set although the ceremony requires user verification.
    case userVerificationRequired
    /// BS is set while BE is not.
    case backupStateInvalid
    /// BE differs from the value recorded at registration; BE never changes for a credential.
    case backupEligibilityChanged
    /// A registration's authenticator data has no attested credential data (AT not set).
    case attestedCredentialDataMissing
    /// The COSE key type or algorithm is not one this library can verify.
    case unsupportedAlgorithm
    /// The credential's algorithm is not one the relying party asked for.
    case algorithmNotAllowed
    /// The attestation statement format is not one this library verifies.
    case attestationFormatUnsupported(String)
    /// The attestation statement failed its format's verification procedure.
    case attestationInvalid(String)
    /// The attestation certificate chain failed against the configured trust anchors, or a
    /// certificate is outside its validity period at the verification time.
    case attestationChainInvalid(format: String, reason: CertificateChainError)
    /// A certificate attestation had no trust anchor to be checked against and the
    /// relying party does not accept unverified chains.
    case attestationTrustAnchorMissing(String)
    /// The assertion signature does not verify with the stored public key.
    case signatureInvalid
    /// The response's user handle is not the credential's user handle.
    case userHandleMismatch
    /// The response has no user handle although the user was not identified beforehand.
    case userHandleMissing

    public var description: String {
        switch self {
        case .invalidBase64URL(let field): "\(field) is not valid base64url"
        case .malformedCBOR(let reason): "CBOR decoding failed: \(reason)"
        case .malformedClientData: "client data JSON could not be parsed"
        case .malformedAuthenticatorData: "authenticator data could not be parsed"
        case .malformedAttestationObject: "attestation object could not be parsed"
        case .invalidCredentialPublicKey: "credential public key is not a valid COSE key"
        case .credentialTypeInvalid: "credential type is not public-key"
        case .credentialIDMismatch: "credential id does not match"
        case .credentialIDTooLong: "credential id longer than 1023 bytes"
        case .clientDataTypeMismatch: "client data type does not match the ceremony"
        case .challengeMismatch: "client data challenge does not match the expected challenge"
        case .originNotAllowed: "client data origin is not allowed"
        case .crossOriginNotAllowed: "cross-origin ceremony not allowed"
        case .topOriginNotAllowed: "top origin not allowed"
        case .rpIDHashMismatch: "rpIdHash does not match the RP ID"
        case .userPresentFlagNotSet: "user present flag not set"
        case .userVerificationRequired: "user verification required but UV flag not set"
        case .backupStateInvalid: "backup state set without backup eligibility"
        case .backupEligibilityChanged: "backup eligibility differs from the stored credential"
        case .attestedCredentialDataMissing: "attested credential data missing"
        case .unsupportedAlgorithm: "credential public key algorithm not supported"
        case .algorithmNotAllowed: "credential public key algorithm not allowed"
        case .attestationFormatUnsupported(let format): "attestation format \(format) not supported"
        case .attestationInvalid(let reason): "attestation statement invalid: \(reason)"
        case .attestationChainInvalid(let format, let reason): "\(format) attestation chain invalid: \(reason)"
        case .attestationTrustAnchorMissing(let format): "no trust anchor for \(format) attestation"
        case .signatureInvalid: "signature verification failed"
        case .userHandleMismatch: "user handle does not match the credential's user"
        case .userHandleMissing: "user handle missing for a discoverable credential"
        }
    }
}
