import Crypto
import Foundation
import Testing
import WebAuthnCore

/// Captured certificate attestations (see `AttestationVectors`) verified end to end.
@Suite struct CapturedAttestationTests {
    static let names = AttestationVectors.all.map(\.name)

    func vector(_ name: String) throws -> AttestationVector {
        try #require(AttestationVectors.all.first { $0.name == name })
    }

    func verifier(_ vector: AttestationVector, rpID: String? = nil, anchors: [Certificate]? = nil, now: Date? = nil)
        throws -> RegistrationVerifier
    {
        let format = try #require(AttestationFormat(rawValue: vector.format))
        let roots = try anchors ?? vector.anchors.map { try Certificate(pemRepresentation: $0) }
        return RegistrationVerifier(
            rpID: rpID ?? vector.rpID, allowedOrigins: [vector.origin],
            allowedAlgorithms: [.es256, .rs256, .eddsa, .ps256],
            trustAnchors: AttestationTrustAnchors(byFormat: roots.isEmpty ? [:] : [format: roots]),
            now: now ?? vector.now)
    }

    func verify(
        _ vector: AttestationVector, response: RegistrationResponseJSON? = nil, challenge: [UInt8]? = nil,
        verifier: RegistrationVerifier? = nil
    ) throws -> VerifiedRegistration {
        try (verifier ?? self.verifier(vector)).verify(
            response ?? vector.response, expectedChallenge: challenge ?? Base64URL.decode(vector.challenge),
            requireUserPresence: true, requireUserVerification: false)
    }

    @Test(arguments: names)
    func verifiesAgainstPublishedRoot(name: String) throws {
        let vector = try vector(name)
        let result = try verify(vector)
        #expect(result.attestationFormat == vector.format)
        #expect(result.algorithm == vector.algorithm)
        #expect(result.credentialID == (try Base64URL.decode(vector.response.rawId)))
        guard case .basic(let chain, let verification) = result.attestationTrust else {
            Issue.record("expected basic attestation, got \(result.attestationTrust)")
            return
        }
        #expect(!chain.isEmpty)
        #expect(verification == (vector.anchors.isEmpty ? .unverified : .verifiedAgainstRoot))
    }

    @Test(arguments: names)
    func wrongChallengeAndRPIDAreRefused(name: String) throws {
        let vector = try vector(name)
        #expect(throws: WebAuthnError.challengeMismatch) { try verify(vector, challenge: [1, 2, 3]) }
        #expect(throws: WebAuthnError.rpIDHashMismatch) { try verify(vector, verifier: verifier(vector, rpID: "example.org")) }
    }

    @Test(arguments: names)
    func tamperedStatementIsRefused(name: String) throws {
        let vector = try vector(name)
        var response = try vector.response
        let objectBytes = try Base64URL.decode(response.response.attestationObject)
        let object = try CBORDecoder().decode(objectBytes)
        var entries = try #require(object.mapValue)
        let statementIndex = try #require(entries.firstIndex { $0.key == .textString("attStmt") })
        var statement = try #require(entries[statementIndex].value.mapValue)
        if let sigIndex = statement.firstIndex(where: { $0.key == .textString("sig") }) {
            var sig = try #require(statement[sigIndex].value.bytesValue)
            sig[sig.count / 2] ^= 0x01
            statement[sigIndex].value = .byteString(sig)
        } else {
            // apple has no sig: alter the leaf certificate's nonce-bound data instead, by
            // changing the sign count in the authenticator data.
            let authIndex = try #require(entries.firstIndex { $0.key == .textString("authData") })
            var authData = try #require(entries[authIndex].value.bytesValue)
            authData[36] ^= 0x01
            entries[authIndex].value = .byteString(authData)
        }
        entries[statementIndex].value = .map(statement)
        response.response.attestationObject = Base64URL.encode(CBOREncoder.encode(.map(entries)))
        let expected: String =
            switch vector.format {
            case "apple": "apple: nonce does not match authenticator and client data"
            case "tpm": "tpm: signature does not verify with the AIK certificate"
            default: "\(vector.format): signature does not verify with the attestation certificate"
            }
        #expect(throws: WebAuthnError.attestationInvalid(expected)) { try verify(vector, response: response) }
    }

    @Test func wrongRootIsRefused() throws {
        let vector = try vector("packed-yubikey")
        let apple = try Certificate(pemRepresentation: AttestationVectors.appleRoot)
        #expect(throws: WebAuthnError.attestationChainInvalid(format: "packed", reason: .untrusted)) {
            try verify(vector, verifier: verifier(vector, anchors: [apple]))
        }
    }

    @Test func expiredAtNowIsRefused() throws {
        let vector = try vector("apple-passkey")
        let later = AttestationVectors.date("2021-09-04T00:00:00Z")
        #expect(throws: WebAuthnError.attestationChainInvalid(format: "apple", reason: .expired)) {
            try verify(vector, verifier: verifier(vector, now: later))
        }
        // Without anchors the validity period is still checked at `now`.
        #expect(throws: WebAuthnError.attestationChainInvalid(format: "apple", reason: .expired)) {
            try verify(vector, verifier: verifier(vector, anchors: [], now: later))
        }
    }

    @Test func androidKeyChainVerifiesAgainstItsIntermediate() throws {
        // The conformance tools' root is not published; trusting the intermediate ends the path there.
        let vector = try vector("android-key-conformance")
        let object = try CBORDecoder().decode(Base64URL.decode(vector.response.response.attestationObject))
        let x5c = try #require(object[textKey: "attStmt"]?[textKey: "x5c"]?.arrayValue)
        let intermediate = try Certificate(derRepresentation: try #require(x5c.last?.bytesValue))
        let result = try verify(vector, verifier: verifier(vector, anchors: [intermediate]))
        guard case .basic(_, .verifiedAgainstRoot) = result.attestationTrust else {
            Issue.record("expected a verified chain")
            return
        }
    }

    @Test func tpmWithOtherCredentialKeyIsRefused() throws {
        // The same statement with the credential key of another TPM response: pubArea no longer matches.
        let vector = try vector("tpm-surface-pro-4")
        let verifier = try verifier(vector, anchors: [])
        var response = try vector.response
        let objectBytes = try Base64URL.decode(response.response.attestationObject)
        let object = try CBORDecoder().decode(objectBytes)
        var entries = try #require(object.mapValue)
        let authIndex = try #require(entries.firstIndex { $0.key == .textString("authData") })
        var authData = try #require(entries[authIndex].value.bytesValue)
        authData[authData.count - 10] ^= 0x01  // inside the RSA modulus
        entries[authIndex].value = .byteString(authData)
        response.response.attestationObject = Base64URL.encode(CBOREncoder.encode(.map(entries)))
        #expect(throws: WebAuthnError.attestationInvalid("tpm: pubArea does not match the credential public key")) {
            try verify(vector, response: response, verifier: verifier)
        }
    }
}
