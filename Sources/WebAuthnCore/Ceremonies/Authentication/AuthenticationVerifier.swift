/// Runs the relying party's half of the authentication ceremony on a browser's
/// `AuthenticationResponseJSON`.
///
/// The caller finds the credential by `response.rawId` (and, when it sent
/// `allowCredentials`, checks it was one of them: step 5), passes it in, and
/// writes back the returned sign count and backup state (step 24).
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-verifying-assertion
public struct AuthenticationVerifier: Sendable {
    public var rpID: String { didSet { rpIDHash = sha256(Array(rpID.utf8)) } }
    /// SHA-256 of `rpID`, computed once rather than on every assertion.
    private var rpIDHash: [UInt8]
    /// Web origins and `android:apk-key-hash:…` origins, compared exactly.
    public var allowedOrigins: Set<String>

    public init(rpID: String, allowedOrigins: Set<String>) {
        self.rpID = rpID
        self.rpIDHash = sha256(Array(rpID.utf8))
        self.allowedOrigins = allowedOrigins
    }

    /// Verifies an assertion for `credential`.
    ///
    /// User presence is always required here: unlike registration, no sign-in
    /// flow legitimately produces UP=0. Step numbers in the body follow §7.2 of the
    /// W3C editor's draft of Level 3.
    ///
    /// - Parameters:
    ///   - requireUserHandle: true when the user was not identified before the ceremony
    ///     (discoverable credential / passkey autofill, empty `allowCredentials`): the
    ///     response must then carry the user handle (step 6).
    /// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-verifying-assertion
    public func verify(
        _ response: AuthenticationResponseJSON, expectedChallenge: [UInt8], credential: StoredCredential,
        requireUserVerification: Bool, requireUserHandle: Bool = false
    ) throws(WebAuthnError) -> VerifiedAuthentication {
        // Step 3. The credential must be a public key credential.
        guard response.type == "public-key" else { throw .credentialTypeInvalid }
        let rawID = try decodeBase64URL(response.rawId, field: "rawId")
        guard response.id == response.rawId else { throw .credentialIDMismatch }

        // Step 5. The response names the credential the caller looked up.
        guard constantTimeEqualBytes(rawID, credential.id) else { throw .credentialIDMismatch }

        // Step 6. When the response carries a user handle, it is the credential's owner;
        // without a previously identified user it must be present.
        if let encoded = response.response.userHandle, !encoded.isEmpty {
            let userHandle = try decodeBase64URL(encoded, field: "response.userHandle")
            if let expected = credential.userHandle, !constantTimeEqualBytes(userHandle, expected) {
                throw .userHandleMismatch
            }
        } else if requireUserHandle {
            throw .userHandleMissing
        }

        // Step 6 (continued). The public key comes from the stored credential record.
        let key = try COSEKey(cbor: credential.publicKey)

        // Step 7. Decode client data, authenticator data and signature.
        let clientDataJSON = try decodeBase64URL(response.response.clientDataJSON, field: "response.clientDataJSON")
        let authDataBytes = try decodeBase64URL(
            response.response.authenticatorData, field: "response.authenticatorData")
        let signature = try decodeBase64URL(response.response.signature, field: "response.signature")

        // Steps 8-9. UTF-8 decode and parse the client data.
        let clientData = try CollectedClientData(from: clientDataJSON)

        // Steps 10-14. Type, challenge, origin, crossOrigin, topOrigin.
        try ClientDataChecks(allowedOrigins: allowedOrigins)
            .verify(clientData, type: .get, expectedChallenge: expectedChallenge)

        let authData = try ParsedAuthenticatorData(from: authDataBytes)

        // Step 15. The assertion is scoped to our RP ID.
        guard constantTimeEqualBytes(authData.rpIDHash, rpIDHash) else {
            throw .rpIDHashMismatch
        }

        // Step 16. UP is always required for an assertion.
        guard authData.flags.contains(.userPresent) else { throw .userPresentFlagNotSet }

        // Step 17. UV when the relying party requires user verification.
        if requireUserVerification, !authData.flags.contains(.userVerified) { throw .userVerificationRequired }

        // Step 18. BS may only be set when BE is set.
        let backupEligible = authData.flags.contains(.backupEligible)
        let backedUp = authData.flags.contains(.backedUp)
        if backedUp, !backupEligible { throw .backupStateInvalid }

        // Step 19. BE is fixed at creation: it must match the credential record.
        guard backupEligible == credential.backupEligible else { throw .backupEligibilityChanged }

        // Step 19 (continued). A change of BS is reported for the caller's policy.
        let backupStateChanged = backedUp != credential.backedUp

        // Step 20. Hash of the exact client data bytes.
        let clientDataHash = sha256(clientDataJSON)

        // Step 21. The signature covers authenticatorData || hash.
        guard key.isValidSignature(signature, for: authDataBytes + clientDataHash) else {
            throw .signatureInvalid
        }

        // Step 22. Sign count: when either counter is non-zero, a counter that did not
        // increase hints at a cloned authenticator (a signal, not proof).
        let possibleClone =
            (authData.signCount != 0 || credential.signCount != 0) && authData.signCount <= credential.signCount

        // Step 23. No extension output is required by this relying party.
        // Step 24 (update the record) is the caller's.
        return VerifiedAuthentication(
            credentialID: credential.id,
            newSignCount: authData.signCount,
            userVerified: authData.flags.contains(.userVerified),
            backedUp: backedUp,
            backupStateChanged: backupStateChanged,
            possibleClone: possibleClone)
    }
}
