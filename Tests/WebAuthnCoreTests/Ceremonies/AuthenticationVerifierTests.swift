import Crypto
import Testing
import WebAuthnCore
@testable import WebAuthnTestSupport

@Suite struct AuthenticationVerifierTests {
    let verifier = AuthenticationVerifier(rpID: TestRP.id, allowedOrigins: TestRP.origins)
    let challenge: [UInt8] = Array(100..<132)

    func expectFailure(
        _ expected: WebAuthnError, _ builder: AssertionBuilder, credential: StoredCredential? = nil,
        requireUserVerification: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let response = try builder.json()
        let stored = try credential ?? builder.authenticator.storedCredential()
        #expect(throws: expected, sourceLocation: sourceLocation) {
            try verifier.verify(
                response, expectedChallenge: challenge, credential: stored,
                requireUserVerification: requireUserVerification)
        }
    }

    // MARK: Happy paths

    @Test(arguments: [COSEAlgorithmIdentifier.es256, .rs256, .eddsa, .ps256])
    func authenticates(algorithm: COSEAlgorithmIdentifier) throws {
        let authenticator = try SoftwareAuthenticator(algorithm: algorithm)
        let response = try authenticator.makeAssertion(challenge: challenge).signCount(5).json()
        let result = try verifier.verify(
            response, expectedChallenge: challenge, credential: authenticator.storedCredential(signCount: 4),
            requireUserVerification: true)
        #expect(result == VerifiedAuthentication(
            credentialID: authenticator.credentialID, newSignCount: 5, userVerified: true, backedUp: false,
            backupStateChanged: false, possibleClone: false))
    }

    @Test(arguments: [COSEAlgorithmIdentifier.es256, .rs256, .eddsa])
    func registrationThenAuthentication(algorithm: COSEAlgorithmIdentifier) throws {
        let authenticator = try SoftwareAuthenticator(algorithm: algorithm)
        let registration = try RegistrationVerifier(rpID: TestRP.id, allowedOrigins: TestRP.origins).verify(
            authenticator.makeRegistration(challenge: challenge).flags(be: true, bs: true).json(),
            expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: true)
        let stored = StoredCredential(
            id: registration.credentialID, publicKey: registration.publicKey, signCount: registration.signCount,
            backupEligible: registration.backupEligible, backedUp: registration.backedUp,
            userHandle: authenticator.userHandle)
        let result = try verifier.verify(
            authenticator.makeAssertion(challenge: challenge).flags(be: true, bs: true).signCount(0).json(),
            expectedChallenge: challenge, credential: stored, requireUserVerification: true)
        #expect(result.backedUp && !result.backupStateChanged && !result.possibleClone)
    }

    @Test func zeroCountersAreNotAClone() throws {
        let authenticator = try SoftwareAuthenticator()
        let result = try verifier.verify(
            authenticator.makeAssertion(challenge: challenge).signCount(0).json(), expectedChallenge: challenge,
            credential: authenticator.storedCredential(signCount: 0), requireUserVerification: false)
        #expect(!result.possibleClone)
    }

    @Test(arguments: [(UInt32(10), UInt32(10)), (10, 9), (10, 0)])
    func nonIncreasingSignCountIsReportedAsPossibleClone(stored: UInt32, new: UInt32) throws {
        let authenticator = try SoftwareAuthenticator()
        let result = try verifier.verify(
            authenticator.makeAssertion(challenge: challenge).signCount(new).json(), expectedChallenge: challenge,
            credential: authenticator.storedCredential(signCount: stored), requireUserVerification: false)
        #expect(result.possibleClone)
        #expect(result.newSignCount == new)
    }

    @Test func backupStateChangeIsReported() throws {
        let authenticator = try SoftwareAuthenticator()
        let result = try verifier.verify(
            authenticator.makeAssertion(challenge: challenge).flags(be: true, bs: true).json(),
            expectedChallenge: challenge,
            credential: authenticator.storedCredential(backupEligible: true, backedUp: false),
            requireUserVerification: false)
        #expect(result.backupStateChanged)
        #expect(result.backedUp)
    }

    @Test func userHandleMayBeAbsent() throws {
        let authenticator = try SoftwareAuthenticator()
        _ = try verifier.verify(
            authenticator.makeAssertion(challenge: challenge).userHandle(nil).json(), expectedChallenge: challenge,
            credential: authenticator.storedCredential(), requireUserVerification: false)
    }

    // MARK: One test per failed step

    @Test func wrongCredentialType() throws {
        try expectFailure(.credentialTypeInvalid, try SoftwareAuthenticator().makeAssertion(challenge: challenge).credentialType("otp"))
    }

    @Test func credentialIDOfAnotherCredential() throws {
        try expectFailure(.credentialIDMismatch, try SoftwareAuthenticator().makeAssertion(challenge: challenge).rawID("AQID"))
    }

    @Test func userHandleMismatch() throws {
        let builder = try SoftwareAuthenticator().makeAssertion(challenge: challenge).userHandle([9, 9, 9])
        try expectFailure(.userHandleMismatch, builder)
    }

    @Test func userHandleMissingForDiscoverableCredential() throws {
        let authenticator = try SoftwareAuthenticator()
        let response = try authenticator.makeAssertion(challenge: challenge).userHandle(nil).json()
        #expect(throws: WebAuthnError.userHandleMissing) {
            try verifier.verify(
                response, expectedChallenge: challenge, credential: try authenticator.storedCredential(),
                requireUserVerification: false, requireUserHandle: true)
        }
    }

    @Test func wrongClientDataType() throws {
        try expectFailure(.clientDataTypeMismatch, try SoftwareAuthenticator().makeAssertion(challenge: challenge).clientDataType("webauthn.create"))
    }

    @Test func wrongChallenge() throws {
        try expectFailure(.challengeMismatch, try SoftwareAuthenticator().makeAssertion(challenge: [0]))
    }

    @Test func wrongOrigin() throws {
        try expectFailure(.originNotAllowed, try SoftwareAuthenticator().makeAssertion(challenge: challenge, origin: "https://example.com.evil"))
    }

    @Test func wrongRPIDHash() throws {
        try expectFailure(.rpIDHashMismatch, try SoftwareAuthenticator().makeAssertion(challenge: challenge, rpID: "login.example.com"))
    }

    @Test func userPresenceAlwaysRequired() throws {
        try expectFailure(.userPresentFlagNotSet, try SoftwareAuthenticator().makeAssertion(challenge: challenge).flags(up: false))
    }

    @Test func userVerificationRequiredButNotSet() throws {
        try expectFailure(
            .userVerificationRequired, try SoftwareAuthenticator().makeAssertion(challenge: challenge).flags(uv: false),
            requireUserVerification: true)
    }

    @Test func backupStateWithoutEligibility() throws {
        try expectFailure(.backupStateInvalid, try SoftwareAuthenticator().makeAssertion(challenge: challenge).flags(be: false, bs: true))
    }

    @Test func backupEligibilityChanged() throws {
        let authenticator = try SoftwareAuthenticator()
        try expectFailure(
            .backupEligibilityChanged, authenticator.makeAssertion(challenge: challenge).flags(be: true),
            credential: try authenticator.storedCredential(backupEligible: false))
    }

    @Test(arguments: [COSEAlgorithmIdentifier.es256, .rs256, .eddsa, .ps256])
    func badSignature(algorithm: COSEAlgorithmIdentifier) throws {
        try expectFailure(.signatureInvalid, try SoftwareAuthenticator(algorithm: algorithm).makeAssertion(challenge: challenge).corruptingSignature())
    }

    @Test func signatureByAnotherKey() throws {
        let authenticator = try SoftwareAuthenticator()
        let impostor = try SoftwareAuthenticator(credentialID: authenticator.credentialID)
        try expectFailure(
            .signatureInvalid, impostor.makeAssertion(challenge: challenge).userHandle(authenticator.userHandle),
            credential: try authenticator.storedCredential())
    }

    // MARK: Malformed input

    @Test func malformedFields() throws {
        let authenticator = try SoftwareAuthenticator()
        let good = try authenticator.makeAssertion(challenge: challenge).json()
        let stored = try authenticator.storedCredential()
        var truncatedAuthData = good
        truncatedAuthData.response.authenticatorData = Base64URL.encode([UInt8](repeating: 0, count: 36))
        var badSignature = good
        badSignature.response.signature = "!!"
        var badUserHandle = good
        badUserHandle.response.userHandle = "A"
        var emptySignature = good
        emptySignature.response.signature = ""
        let cases: [(AuthenticationResponseJSON, WebAuthnError)] = [
            (truncatedAuthData, .malformedAuthenticatorData),
            (badSignature, .invalidBase64URL(field: "response.signature")),
            (badUserHandle, .invalidBase64URL(field: "response.userHandle")),
            (emptySignature, .signatureInvalid),
        ]
        for (response, expected) in cases {
            #expect(throws: expected) {
                try verifier.verify(response, expectedChallenge: challenge, credential: stored, requireUserVerification: false)
            }
        }
    }

    @Test func storedKeyThatIsNotCOSE() throws {
        let authenticator = try SoftwareAuthenticator()
        var stored = try authenticator.storedCredential()
        stored.publicKey = [0xA1, 0x01]
        try expectFailure(.malformedCBOR(.lengthTooLarge), authenticator.makeAssertion(challenge: challenge), credential: stored)
    }
}
