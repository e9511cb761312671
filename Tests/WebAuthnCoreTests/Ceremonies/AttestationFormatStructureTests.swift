import Testing
import WebAuthnCore
@testable import WebAuthnTestSupport

/// Certificate-based formats refuse statements with missing or mistyped members, and
/// certificates that do not parse, before any signature is checked.
@Suite struct AttestationFormatStructureTests {
    let challenge: [UInt8] = Array(0..<16)
    let lenient = RegistrationVerifier(rpID: TestRP.id, allowedOrigins: TestRP.origins, acceptUnverifiedAttestation: true)
    let strict = RegistrationVerifier(rpID: TestRP.id, allowedOrigins: TestRP.origins)
    static let certificate: [UInt8] = [0x30, 0x82, 0x01, 0x0A]

    static func statement(_ entries: [(String, CBORValue)]) -> CBORValue {
        .map(entries.map { CBORMapEntry(.textString($0.0), $0.1) })
    }

    static let x5c: (String, CBORValue) = ("x5c", .array([.byteString(certificate)]))
    static let sig: (String, CBORValue) = ("sig", .byteString([1, 2, 3]))
    static let alg: (String, CBORValue) = ("alg", .int(-7))

    func register(format: String, statement: CBORValue, verifier: RegistrationVerifier) throws -> VerifiedRegistration {
        let response = try SoftwareAuthenticator().makeRegistration(challenge: challenge).format(format)
            .statement(statement).json()
        return try verifier.verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
    }

    @Test(arguments: [
        ("fido-u2f", statement([sig]), "fido-u2f: x5c missing or empty"),
        ("fido-u2f", statement([x5c]), "fido-u2f: sig missing"),
        ("fido-u2f", statement([sig, ("x5c", .array([.byteString(certificate), .byteString(certificate)]))]),
         "fido-u2f: x5c must hold exactly one certificate"),
        ("apple", statement([("x5c", .array([]))]), "apple: x5c missing or empty"),
        ("apple", statement([("x5c", .array([.textString("cert")]))]), "apple: x5c entry is not a certificate"),
        ("android-key", statement([sig, x5c]), "android-key: alg missing"),
        ("tpm", statement([alg, x5c, sig]), "tpm: ver is not 2.0"),
        ("tpm", statement([("ver", .textString("2.0")), alg, x5c, sig, ("pubArea", .byteString([1]))]),
         "tpm: certInfo missing"),
        ("packed", statement([sig]), "packed: alg missing"),
        ("packed", statement([alg]), "packed: sig missing"),
        ("packed", statement([alg, sig, ("x5c", .byteString(certificate))]), "packed: x5c missing or empty"),
        ("apple", statement([x5c]), "apple: x5c certificate is malformed"),
        ("android-key", statement([alg, sig, x5c]), "android-key: x5c certificate is malformed"),
    ])
    func malformedStatement(format: String, statement: CBORValue, reason: String) throws {
        #expect(throws: WebAuthnError.attestationInvalid(reason)) {
            try register(format: format, statement: statement, verifier: lenient)
        }
    }

    @Test func fidoU2FRequiresP256Credential() throws {
        let response = try SoftwareAuthenticator(algorithm: .eddsa).makeRegistration(challenge: challenge)
            .format("fido-u2f").statement(Self.statement([Self.sig, Self.x5c])).json()
        #expect(throws: WebAuthnError.attestationInvalid("fido-u2f: credential public key is not P-256")) {
            try lenient.verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
        }
    }

    @Test func androidSafetyNetIsNotSupported() throws {
        #expect(throws: WebAuthnError.attestationFormatUnsupported("android-safetynet")) {
            try register(format: "android-safetynet", statement: .map([]), verifier: lenient)
        }
    }
}
