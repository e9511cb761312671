/// The flags byte of authenticator data.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#authdata-flags
public struct AuthenticatorFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// UP: the user touched or otherwise acknowledged the authenticator.
    public static let userPresent = AuthenticatorFlags(rawValue: 0x01)
    /// UV: the authenticator verified the user (biometric, PIN).
    public static let userVerified = AuthenticatorFlags(rawValue: 0x04)
    /// BE: the credential may be backed up / synced (a multi-device credential).
    public static let backupEligible = AuthenticatorFlags(rawValue: 0x08)
    /// BS: the credential is currently backed up.
    public static let backedUp = AuthenticatorFlags(rawValue: 0x10)
    /// AT: attested credential data follows the sign count.
    public static let attestedCredentialData = AuthenticatorFlags(rawValue: 0x40)
    /// ED: an extensions map ends the authenticator data.
    public static let extensionData = AuthenticatorFlags(rawValue: 0x80)
}
