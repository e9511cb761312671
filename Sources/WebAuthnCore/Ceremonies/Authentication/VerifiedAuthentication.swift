/// An assertion that passed every check, with what the caller should update.
public struct VerifiedAuthentication: Sendable, Equatable {
    public var credentialID: [UInt8]
    /// Store this as the credential's sign count.
    public var newSignCount: UInt32
    public var userVerified: Bool
    /// Store this as the credential's backup state.
    public var backedUp: Bool
    /// BS differs from the stored value (the passkey was synced or un-synced).
    public var backupStateChanged: Bool
    /// Both counters are non-zero and the new one did not increase: a sign the
    /// authenticator may have been cloned. Reported only; the policy is the caller's.
    public var possibleClone: Bool

    public init(
        credentialID: [UInt8], newSignCount: UInt32, userVerified: Bool, backedUp: Bool, backupStateChanged: Bool,
        possibleClone: Bool
    ) {
        self.credentialID = credentialID
        self.newSignCount = newSignCount
        self.userVerified = userVerified
        self.backedUp = backedUp
        self.backupStateChanged = backupStateChanged
        self.possibleClone = possibleClone
    }
}
