/// Whether a discoverable credential (passkey) is wanted.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#enumdef-residentkeyrequirement
public enum ResidentKeyRequirement: String, Codable, Sendable {
    case discouraged, preferred, required
}

/// Whether the authenticator should verify the user.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#enumdef-userverificationrequirement
public enum UserVerificationRequirement: String, Codable, Sendable {
    case required, preferred, discouraged
}

/// Platform (built in, synced) or roaming (security key) authenticator.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#enumdef-authenticatorattachment
public enum AuthenticatorAttachment: String, Codable, Sendable {
    case platform
    case crossPlatform = "cross-platform"
}

/// How much attestation the relying party asks for.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#enumdef-attestationconveyancepreference
public enum AttestationConveyancePreference: String, Codable, Sendable {
    case none, indirect, direct, enterprise
}

/// Hints for the browser's UI.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#enumdef-publickeycredentialhint
public enum PublicKeyCredentialHint: String, Codable, Sendable {
    case securityKey = "security-key"
    case clientDevice = "client-device"
    case hybrid
}
