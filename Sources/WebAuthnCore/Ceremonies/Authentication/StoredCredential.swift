/// The parts of a stored credential record an authentication needs, as the
/// caller loaded them for `response.rawId`.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#credential-record
public struct StoredCredential: Sendable, Equatable {
    public var id: [UInt8]
    /// COSE_Key bytes as returned by `VerifiedRegistration.publicKey`.
    public var publicKey: [UInt8]
    public var signCount: UInt32
    public var backupEligible: Bool
    /// The last seen BS flag, so a change can be reported.
    public var backedUp: Bool
    /// The account's user handle; when set, a user handle in the response must equal it.
    public var userHandle: [UInt8]?

    public init(
        id: [UInt8], publicKey: [UInt8], signCount: UInt32, backupEligible: Bool, backedUp: Bool,
        userHandle: [UInt8]?
    ) {
        self.id = id
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.userHandle = userHandle
    }
}
