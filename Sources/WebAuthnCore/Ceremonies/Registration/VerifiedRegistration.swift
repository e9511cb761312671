/// A registration that passed every check; what the caller stores as the credential record.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#credential-record
public struct VerifiedRegistration: Sendable, Equatable {
    public var credentialID: [UInt8]
    /// The COSE_Key bytes exactly as attested; pass them back as `StoredCredential.publicKey`.
    public var publicKey: [UInt8]
    public var algorithm: COSEAlgorithmIdentifier
    public var signCount: UInt32
    /// 16 bytes; all zero when the authenticator does not disclose its model.
    public var aaguid: [UInt8]
    public var backupEligible: Bool
    public var backedUp: Bool
    public var userVerified: Bool
    /// False only for a conditional registration (`requireUserPresence: false`).
    public var userPresent: Bool
    /// Transport hints reported by the browser, for `allowCredentials` later (known
    /// values only, without duplicates).
    public var transports: [String]
    public var attestationFormat: String
    public var attestationTrust: AttestationTrust

    public init(
        credentialID: [UInt8], publicKey: [UInt8], algorithm: COSEAlgorithmIdentifier, signCount: UInt32,
        aaguid: [UInt8], backupEligible: Bool, backedUp: Bool, userVerified: Bool, userPresent: Bool,
        transports: [String], attestationFormat: String, attestationTrust: AttestationTrust
    ) {
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.signCount = signCount
        self.aaguid = aaguid
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.userVerified = userVerified
        self.userPresent = userPresent
        self.transports = transports
        self.attestationFormat = attestationFormat
        self.attestationTrust = attestationTrust
    }
}
