import WebAuthnCore

extension WebAuthnError {
    /// The case name, for `reason=` in log lines (`reason=userPresentFlagNotSet`): stable,
    /// searchable, and free of anything the client sent.
    var logReason: String {
        switch self {
        case .invalidBase64URL: "invalidBase64URL"
        case .malformedCBOR: "malformedCBOR"
        case .malformedClientData: "malformedClientData"
        case .malformedAuthenticatorData: "malformedAuthenticatorData"
        case .malformedAttestationObject: "malformedAttestationObject"
        case .invalidCredentialPublicKey: "invalidCredentialPublicKey"
        case .credentialTypeInvalid: "credentialTypeInvalid"
        case .credentialIDMismatch: "credentialIDMismatch"
        case .credentialIDTooLong: "credentialIDTooLong"
        case .clientDataTypeMismatch: "clientDataTypeMismatch"
        case .challengeMismatch: "challengeMismatch"
        case .originNotAllowed: "originNotAllowed"
        case .crossOriginNotAllowed: "crossOriginNotAllowed"
        case .topOriginNotAllowed: "topOriginNotAllowed"
        case .rpIDHashMismatch: "rpIDHashMismatch"
        case .userPresentFlagNotSet: "userPresentFlagNotSet"
        case .userVerificationRequired: "userVerificationRequired"
        case .backupStateInvalid: "backupStateInvalid"
        case .backupEligibilityChanged: "backupEligibilityChanged"
        case .attestedCredentialDataMissing: "attestedCredentialDataMissing"
        case .unsupportedAlgorithm: "unsupportedAlgorithm"
        case .algorithmNotAllowed: "algorithmNotAllowed"
        case .attestationFormatUnsupported: "attestationFormatUnsupported"
        case .attestationInvalid: "attestationInvalid"
        case .attestationChainInvalid: "attestationChainInvalid"
        case .attestationTrustAnchorMissing: "attestationTrustAnchorMissing"
        case .signatureInvalid: "signatureInvalid"
        case .userHandleMismatch: "userHandleMismatch"
        case .userHandleMissing: "userHandleMissing"
        }
    }
}

/// `reason=` for a failed ceremony step, whatever was thrown.
func webAuthnReason(_ error: any Error) -> String {
    (error as? WebAuthnError)?.logReason ?? String(describing: type(of: error))
}
