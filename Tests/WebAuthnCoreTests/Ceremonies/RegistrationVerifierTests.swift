import Crypto
import Testing
import WebAuthnCore
@testable import WebAuthnTestSupport

@Suite struct RegistrationVerifierTests {
    let verifier = RegistrationVerifier(rpID: TestRP.id, allowedOrigins: TestRP.origins)
    let challenge: [UInt8] = Array(0..<32)

    func verify(
        _ builder: RegistrationBuilder, verifier: RegistrationVerifier? = nil, challenge: [UInt8]? = nil,
        requireUserPresence: Bool = true, requireUserVerification: Bool = false
    ) throws -> VerifiedRegistration {
        try (verifier ?? self.verifier).verify(
            try builder.json(), expectedChallenge: challenge ?? self.challenge,
            requireUserPresence: requireUserPresence, requireUserVerification: requireUserVerification)
    }

    func expectFailure(
        _ expected: WebAuthnError, _ builder: RegistrationBuilder, verifier: RegistrationVerifier? = nil,
        challenge: [UInt8]? = nil, requireUserPresence: Bool = true, requireUserVerification: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let response = try builder.json()
        #expect(throws: expected, sourceLocation: sourceLocation) {
            try (verifier ?? self.verifier).verify(
                response, expectedChallenge: challenge ?? self.challenge,
                requireUserPresence: requireUserPresence, requireUserVerification: requireUserVerification)
        }
    }

    // MARK: Happy paths

    @Test(arguments: [COSEAlgorithmIdentifier.es256, .rs256, .eddsa, .ps256])
    func registersWithNoneAttestation(algorithm: COSEAlgorithmIdentifier) throws {
        let authenticator = try SoftwareAuthenticator(algorithm: algorithm)
        let result = try verify(
            authenticator.makeRegistration(challenge: challenge).flags(up: true, uv: true, be: true, bs: true)
                .signCount(7),
            requireUserVerification: true)
        #expect(result.credentialID == authenticator.credentialID)
        #expect(try COSEKey(cbor: result.publicKey) == authenticator.cosePublicKey)
        #expect(result.algorithm == algorithm)
        #expect(result.signCount == 7)
        #expect(result.aaguid == authenticator.aaguid)
        #expect(result.backupEligible && result.backedUp && result.userVerified && result.userPresent)
        #expect(result.transports == ["internal", "hybrid"])
        #expect(result.attestationFormat == "none")
        #expect(result.attestationTrust == .none)
    }

    @Test(arguments: [COSEAlgorithmIdentifier.es256, .rs256, .eddsa, .ps256])
    func registersWithPackedSelfAttestation(algorithm: COSEAlgorithmIdentifier) throws {
        let authenticator = try SoftwareAuthenticator(algorithm: algorithm)
        let result = try verify(authenticator.makeRegistration(challenge: challenge).attestation(.packedSelf))
        #expect(result.attestationFormat == "packed")
        #expect(result.attestationTrust == .selfAttestation)
        #expect(result.algorithm == algorithm)
    }

    @Test func acceptsAndroidAppOrigin() throws {
        let authenticator = try SoftwareAuthenticator()
        let origin = "android:apk-key-hash:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
        _ = try verify(authenticator.makeRegistration(challenge: challenge, origin: origin))
    }

    @Test func unknownAndRepeatedTransportsAreDropped() throws {
        var response = try SoftwareAuthenticator().makeRegistration(challenge: challenge).json()
        response.response.transports = ["usb", "carrier-pigeon", "usb", "nfc"]
        let result = try verifier.verify(
            response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
        #expect(result.transports == ["usb", "nfc"])
    }

    @Test func conditionalRegistrationAcceptsUserPresenceNotSet() throws {
        let authenticator = try SoftwareAuthenticator()
        let result = try verify(
            authenticator.makeRegistration(challenge: challenge).flags(up: false, uv: false),
            requireUserPresence: false)
        #expect(!result.userPresent)
        #expect(!result.userVerified)
    }

    // MARK: One test per failed step

    @Test func wrongCredentialType() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).credentialType("password")
        try expectFailure(.credentialTypeInvalid, builder)
    }

    @Test func wrongClientDataType() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).clientDataType("webauthn.get")
        try expectFailure(.clientDataTypeMismatch, builder)
    }

    @Test func wrongChallenge() throws {
        try expectFailure(.challengeMismatch, try SoftwareAuthenticator().makeRegistration(challenge: [1, 2, 3]))
    }

    @Test func challengeNotBase64URL() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).challengeText("AAEC+/==")
        try expectFailure(.challengeMismatch, builder)
    }

    @Test func wrongOrigin() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge, origin: "https://evil.example")
        try expectFailure(.originNotAllowed, builder)
    }

    @Test func originIsComparedExactly() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge, origin: TestRP.origin + "/")
        try expectFailure(.originNotAllowed, builder)
    }

    @Test func crossOrigin() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).crossOrigin(true)
        try expectFailure(.crossOriginNotAllowed, builder)
    }

    @Test func foreignTopOrigin() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).topOrigin("https://evil.example")
        try expectFailure(.topOriginNotAllowed, builder)
    }

    @Test func wrongRPIDHash() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge, rpID: "evil.example")
        try expectFailure(.rpIDHashMismatch, builder)
    }

    @Test func userPresenceRequiredButNotSet() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).flags(up: false)
        try expectFailure(.userPresentFlagNotSet, builder)
    }

    @Test func userVerificationRequiredButNotSet() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).flags(uv: false)
        try expectFailure(.userVerificationRequired, builder, requireUserVerification: true)
        // Not required: accepted.
        #expect(try verify(builder).userVerified == false)
    }

    @Test func backupStateWithoutEligibility() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).flags(be: false, bs: true)
        try expectFailure(.backupStateInvalid, builder)
    }

    @Test func algorithmNotAllowed() throws {
        let narrow = RegistrationVerifier(rpID: TestRP.id, allowedOrigins: TestRP.origins, allowedAlgorithms: [.es256])
        let builder = try SoftwareAuthenticator(algorithm: .eddsa).makeRegistration(challenge: challenge)
        try expectFailure(.algorithmNotAllowed, builder, verifier: narrow)
    }

    @Test func unsupportedCredentialAlgorithm() throws {
        let es384 = CBOREncoder.encode(.map([
            CBORMapEntry(.int(1), .int(2)), CBORMapEntry(.int(3), .int(-35)), CBORMapEntry(.int(-1), .int(2)),
            CBORMapEntry(.int(-2), .byteString([UInt8](repeating: 1, count: 48))),
            CBORMapEntry(.int(-3), .byteString([UInt8](repeating: 2, count: 48))),
        ]))
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).coseKey(es384)
        try expectFailure(.unsupportedAlgorithm, builder)
    }

    @Test func unknownAttestationFormat() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).format("Packed")
        try expectFailure(.attestationFormatUnsupported("Packed"), builder)
    }

    @Test func noneWithNonEmptyStatement() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge)
            .statement(.map([CBORMapEntry(.textString("sig"), .byteString([1]))]))
        try expectFailure(.attestationInvalid("none: attStmt is not empty"), builder)
    }

    @Test func packedSelfAttestationBadSignature() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).attestation(.packedSelf)
            .corruptingSignature()
        try expectFailure(.attestationInvalid("packed: self-attestation signature does not verify"), builder)
    }

    @Test func packedSelfAttestationAlgorithmMismatch() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).attestation(.packedSelf)
            .packedAlg(.rs256)
        try expectFailure(.attestationInvalid("packed: alg does not match the credential public key"), builder)
    }

    @Test func packedWithMalformedCertificateIsRefused() throws {
        let statement: CBORValue = .map([
            CBORMapEntry(.textString("alg"), .int(-7)),
            CBORMapEntry(.textString("sig"), .byteString([0x30, 0x06, 1, 2, 3, 4, 5, 6])),
            CBORMapEntry(.textString("x5c"), .array([.byteString([0x30, 0x82, 0x01])])),
        ])
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).format("packed")
            .statement(statement)
        try expectFailure(.attestationInvalid("packed: x5c certificate is malformed"), builder)
    }

    @Test func credentialIDMismatch() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).rawID("AQID")
        try expectFailure(.credentialIDMismatch, builder)
    }

    @Test func attestedCredentialDataMissing() throws {
        let authenticator = try SoftwareAuthenticator()
        let authData = AuthenticatorDataBuilder().rpIDHash(Array(SHA256.hash(data: Array(TestRP.id.utf8)))).build()
        var response = try authenticator.makeRegistration(challenge: challenge).json()
        response.response.attestationObject = Base64URL.encode(CBOREncoder.encode(.map([
            CBORMapEntry(.textString("fmt"), .textString("none")),
            CBORMapEntry(.textString("attStmt"), .map([])),
            CBORMapEntry(.textString("authData"), .byteString(authData)),
        ])))
        #expect(throws: WebAuthnError.attestedCredentialDataMissing) {
            try verifier.verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
        }
    }

    // MARK: Malformed input

    @Test func invalidBase64URLFieldsAreNamed() throws {
        let good = try SoftwareAuthenticator().makeRegistration(challenge: challenge).json()
        var badRawID = good
        badRawID.rawId = "AQ=="
        badRawID.id = "AQ=="
        var badClientData = good
        badClientData.response.clientDataJSON = "e30="
        var badAttestation = good
        badAttestation.response.attestationObject = "not base64!"
        for (response, field) in [
            (badRawID, "rawId"), (badClientData, "response.clientDataJSON"),
            (badAttestation, "response.attestationObject"),
        ] {
            #expect(throws: WebAuthnError.invalidBase64URL(field: field)) {
                try verifier.verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
            }
        }
    }

    @Test func malformedAttestationObjects() throws {
        let good = try SoftwareAuthenticator().makeRegistration(challenge: challenge)
        let object = try good.attestationObject()
        let cases: [([UInt8], WebAuthnError)] = [
            (Array(object.prefix(object.count - 3)), .malformedCBOR(.lengthTooLarge)),
            (object + [0x00], .malformedCBOR(.trailingBytes)),
            ([UInt8](repeating: 0x81, count: 40) + [0x00], .malformedCBOR(.nestingTooDeep)),
            (CBOREncoder.encode(.array([.textString("fmt")])), .malformedAttestationObject),
            (CBOREncoder.encode(.map([
                CBORMapEntry(.textString("fmt"), .int(1)),
                CBORMapEntry(.textString("attStmt"), .map([])),
                CBORMapEntry(.textString("authData"), .byteString([1])),
            ])), .malformedAttestationObject),
            (CBOREncoder.encode(.map([
                CBORMapEntry(.textString("fmt"), .textString("none")),
                CBORMapEntry(.textString("attStmt"), .map([])),
                CBORMapEntry(.textString("authData"), .byteString([1, 2, 3])),
            ])), .malformedAuthenticatorData),
        ]
        for (bytes, expected) in cases {
            var response = try good.json()
            response.response.attestationObject = Base64URL.encode(bytes)
            #expect(throws: expected) {
                try verifier.verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
            }
        }
    }

    @Test func malformedClientData() throws {
        var response = try SoftwareAuthenticator().makeRegistration(challenge: challenge).json()
        response.response.clientDataJSON = Base64URL.encode(Array(#"{"type":"webauthn.create"}"#.utf8))
        #expect(throws: WebAuthnError.malformedClientData) {
            try verifier.verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
        }
    }
}
