import Foundation

/// Runs the relying party's half of the registration ceremony on a browser's
/// `RegistrationResponseJSON`.
///
/// It stores nothing: the caller passes the challenge it issued and stores the
/// returned `VerifiedRegistration`; checking that the credential id is not yet
/// registered (step 26) is the caller's, against its database.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-registering-a-new-credential
public struct RegistrationVerifier: Sendable {
    public var rpID: String
    /// Web origins (`https://login.example.com`) and Android app origins
    /// (`android:apk-key-hash:…`), compared exactly.
    public var allowedOrigins: Set<String>
    /// The algorithms offered in `pubKeyCredParams`.
    public var allowedAlgorithms: [COSEAlgorithmIdentifier]
    /// Roots for attestation certificate chains, by format and AAGUID.
    public var trustAnchors: AttestationTrustAnchors
    /// The time attestation certificates must be valid at. With trust anchors, nil means
    /// the current time; without, nil leaves validity unchecked (the chain is reported
    /// as unverified anyway). Inject it for deterministic tests and offline checks.
    public var now: Date?
    /// Whether a certificate attestation whose chain could not be checked, because no
    /// trust anchor is configured for its format or AAGUID, is accepted as
    /// `.basic(…, .unverified)`. Its signature and certificate requirements are verified
    /// either way; what is missing is the link to a known manufacturer, so the AAGUID
    /// is then a claim, as with `none`. When false such a registration is refused with
    /// `attestationTrustAnchorMissing`; a chain that fails against configured anchors is
    /// always refused.
    public var acceptUnverifiedAttestation: Bool

    public init(
        rpID: String, allowedOrigins: Set<String>,
        allowedAlgorithms: [COSEAlgorithmIdentifier] = [.es256, .rs256, .eddsa, .ps256],
        trustAnchors: AttestationTrustAnchors = .none, now: Date? = nil,
        acceptUnverifiedAttestation: Bool = true
    ) {
        self.rpID = rpID
        self.allowedOrigins = allowedOrigins
        self.allowedAlgorithms = allowedAlgorithms
        self.trustAnchors = trustAnchors
        self.now = now
        self.acceptUnverifiedAttestation = acceptUnverifiedAttestation
    }

    /// Verifies a registration response. Step numbers in the body follow §7.1 of the
    /// W3C editor's draft of Level 3.
    ///
    /// - Parameters:
    ///   - expectedChallenge: the challenge issued for this ceremony (consumed by the caller).
    ///   - requireUserPresence: false ONLY for the conditional registration that follows
    ///     a password sign-in (`mediation: "conditional"`), where authenticators
    ///     legitimately report UP=0.
    ///   - requireUserVerification: true when the options asked for `userVerification: "required"`.
    /// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-registering-a-new-credential
    public func verify(
        _ response: RegistrationResponseJSON, expectedChallenge: [UInt8],
        requireUserPresence: Bool, requireUserVerification: Bool
    ) throws(WebAuthnError) -> VerifiedRegistration {
        // Step 3. The credential must be a public key credential.
        guard response.type == "public-key" else { throw .credentialTypeInvalid }
        // `id` is by definition the base64url form of `rawId`.
        let rawID = try decodeBase64URL(response.rawId, field: "rawId")
        guard response.id == response.rawId else { throw .credentialIDMismatch }
        // Step 4. Client extension outputs are not needed by this relying party.
        let clientDataJSON = try decodeBase64URL(response.response.clientDataJSON, field: "response.clientDataJSON")
        let attestationObjectBytes = try decodeBase64URL(
            response.response.attestationObject, field: "response.attestationObject")

        // Steps 5-6. UTF-8 decode and parse the client data.
        let clientData = try CollectedClientData(from: clientDataJSON)

        // Steps 7-11. Type, challenge, origin, crossOrigin, topOrigin.
        try ClientDataChecks(allowedOrigins: allowedOrigins)
            .verify(clientData, type: .create, expectedChallenge: expectedChallenge)

        // Step 12. Hash of the exact client data bytes.
        let clientDataHash = sha256(clientDataJSON)

        // Step 13. CBOR-decode the attestation object into fmt, authData and attStmt.
        let attestationObject = try ParsedAttestationObject(from: attestationObjectBytes)
        let authData = attestationObject.authenticatorData

        // Step 14. The credential is scoped to our RP ID.
        guard constantTimeEqualBytes(authData.rpIDHash, sha256(Array(rpID.utf8))) else {
            throw .rpIDHashMismatch
        }

        // Step 15. UP, unless this is a conditional registration.
        if requireUserPresence, !authData.flags.contains(.userPresent) { throw .userPresentFlagNotSet }

        // Step 16. UV when the relying party requires user verification.
        if requireUserVerification, !authData.flags.contains(.userVerified) { throw .userVerificationRequired }

        // Step 17. BS may only be set when BE is set.
        if authData.flags.contains(.backedUp), !authData.flags.contains(.backupEligible) {
            throw .backupStateInvalid
        }

        // Steps 18-19. BE and BS are returned to the caller, whose policy they inform.

        // A registration must carry attested credential data (AT).
        guard let attested = authData.attestedCredentialData else { throw .attestedCredentialDataMissing }

        // Step 20. The credential's algorithm is one we offered and can verify.
        let key = try COSEKey(cbor: attested.credentialPublicKey)
        guard allowedAlgorithms.contains(key.algorithm) else { throw .algorithmNotAllowed }

        // Step 21. Determine the attestation statement format (case-sensitive).
        guard let format = AttestationFormat(rawValue: attestationObject.format) else {
            throw .attestationFormatUnsupported(attestationObject.format)
        }

        // Step 22. Run the format's verification procedure.
        let trust = try format.verify(
            AttestationInput(
                statement: attestationObject.statement, authenticatorData: authData, attested: attested,
                credentialKey: key, clientDataHash: clientDataHash,
                trustAnchors: trustAnchors.anchors(format: format, aaguid: attested.aaguid), now: now))

        // Steps 23-24. Trust assessment: self and none are acceptable for passkeys; a chain
        // without a configured anchor unless the relying party requires anchored chains.
        if case .basic(_, .unverified) = trust, !acceptUnverifiedAttestation {
            throw .attestationTrustAnchorMissing(attestationObject.format)
        }

        // Step 25. credentialId is at most 1023 bytes (also enforced while parsing).
        guard attested.credentialID.count <= ParsedAuthenticatorData.maxCredentialIDLength else {
            throw .credentialIDTooLong
        }
        // The id the browser reports is the id the authenticator attested.
        guard constantTimeEqualBytes(rawID, attested.credentialID) else { throw .credentialIDMismatch }

        // Step 26 (not yet registered) and step 27 (store the record) are the caller's.
        // Step 28. No extension output is required by this relying party; unsolicited
        // ones are ignored, as the specification allows.
        return VerifiedRegistration(
            credentialID: attested.credentialID,
            publicKey: attested.credentialPublicKeyBytes,
            algorithm: key.algorithm,
            signCount: authData.signCount,
            aaguid: attested.aaguid,
            backupEligible: authData.flags.contains(.backupEligible),
            backedUp: authData.flags.contains(.backedUp),
            userVerified: authData.flags.contains(.userVerified),
            userPresent: authData.flags.contains(.userPresent),
            transports: Self.knownTransports(response.response.transports ?? []),
            attestationFormat: attestationObject.format,
            attestationTrust: trust)
    }

    /// The transports worth storing for `allowCredentials`: known values only, each once,
    /// so a client cannot make the stored record grow without bound.
    /// - SeeAlso: https://www.w3.org/TR/webauthn-3/#enum-transport
    static func knownTransports(_ reported: [String]) -> [String] {
        let known: Set<String> = ["usb", "nfc", "ble", "smart-card", "hybrid", "internal"]
        var result: [String] = []
        for transport in reported where known.contains(transport) && !result.contains(transport) {
            result.append(transport)
        }
        return result
    }
}
