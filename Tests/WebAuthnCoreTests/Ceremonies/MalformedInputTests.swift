import Crypto
import Testing
import WebAuthnCore
@testable import WebAuthnTestSupport

/// Hostile bytes never trap: every truncation and every single-byte corruption of a
/// valid response ends in a `WebAuthnError` (or, for bytes nobody checks, success).
@Suite struct MalformedInputTests {
    let challenge: [UInt8] = Array(0..<16)
    let registration = RegistrationVerifier(rpID: TestRP.id, allowedOrigins: TestRP.origins)
    let authentication = AuthenticationVerifier(rpID: TestRP.id, allowedOrigins: TestRP.origins)

    func register(_ response: RegistrationResponseJSON) throws(WebAuthnError) -> VerifiedRegistration {
        try registration.verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
    }

    @Test func everyTruncatedAttestationObjectIsRefused() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).attestation(.packedSelf)
        let good = try builder.json()
        let object = try builder.attestationObject()
        for length in 0..<object.count {
            var response = good
            response.response.attestationObject = Base64URL.encode(object.prefix(length))
            #expect(throws: WebAuthnError.self) { try register(response) }
        }
    }

    @Test func corruptedAttestationObjectsNeverTrap() throws {
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge).attestation(.packedSelf)
        let good = try builder.json()
        let object = try builder.attestationObject()
        var refused = 0
        for index in object.indices {
            for replacement: UInt8 in [0x00, 0xFF, object[index] ^ 0x80] where replacement != object[index] {
                var bytes = object
                bytes[index] = replacement
                var response = good
                response.response.attestationObject = Base64URL.encode(bytes)
                do { _ = try register(response) } catch { refused += 1 }
            }
        }
        // Nearly every byte is covered by CBOR structure, a check or the signature.
        #expect(refused > object.count * 2)
    }

    @Test func oversizedAttestationObject() throws {
        var response = try SoftwareAuthenticator().makeRegistration(challenge: challenge).json()
        let huge: [UInt8] = [0x5A, 0x00, 0x01, 0x11, 0x70] + [UInt8](repeating: 0, count: 70_000)
        response.response.attestationObject = Base64URL.encode(huge)
        #expect(throws: WebAuthnError.malformedCBOR(.lengthTooLarge)) { try register(response) }
    }

    @Test func everyTruncatedAuthenticatorDataIsRefused() throws {
        let authenticator = try SoftwareAuthenticator()
        let good = try authenticator.makeAssertion(challenge: challenge).json()
        let authData = try Base64URL.decode(good.response.authenticatorData)
        let stored = try authenticator.storedCredential()
        for length in 0..<authData.count {
            var response = good
            response.response.authenticatorData = Base64URL.encode(authData.prefix(length))
            #expect(throws: WebAuthnError.malformedAuthenticatorData) {
                try authentication.verify(response, expectedChallenge: challenge, credential: stored, requireUserVerification: false)
            }
        }
    }

    @Test func wrongJSONTypesInClientData() throws {
        var response = try SoftwareAuthenticator().makeRegistration(challenge: challenge).json()
        for json in [#"{"type":["webauthn.create"],"challenge":"AAEC","origin":"x"}"#, #"null"#, #"42"#] {
            response.response.clientDataJSON = Base64URL.encode(Array(json.utf8))
            #expect(throws: WebAuthnError.malformedClientData) { try register(response) }
        }
    }
}
