import Crypto
import Foundation
import Testing
import WebAuthnCore
@testable import WebAuthnTestSupport

/// packed attestation with x5c made by a software authenticator holding the test PKI's
/// attestation key (see `TestPKI`).
@Suite struct PackedCertificateAttestationTests {
    let challenge: [UInt8] = Array(100..<132)
    static let during = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15, leaf valid
    static let afterExpiry = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15

    func pki() throws -> (leaf: Certificate, root: Certificate, other: Certificate, key: P256.Signing.PrivateKey) {
        (
            try Certificate(pemRepresentation: TestPKI.leafPEM), try Certificate(pemRepresentation: TestPKI.rootPEM),
            try Certificate(pemRepresentation: TestPKI.otherRootPEM),
            try P256.Signing.PrivateKey(pemRepresentation: TestPKI.leafPrivateKeyPEM)
        )
    }

    func builder() throws -> RegistrationBuilder {
        let (leaf, _, _, key) = try pki()
        return try SoftwareAuthenticator().makeRegistration(challenge: challenge)
            .attestation(.packedCertificate(key: key, chain: [leaf.derRepresentation]))
    }

    func verifier(anchors: [Certificate] = [], now: Date? = during, acceptUnverified: Bool = true) -> RegistrationVerifier {
        RegistrationVerifier(
            rpID: TestRP.id, allowedOrigins: TestRP.origins,
            trustAnchors: AttestationTrustAnchors(byFormat: anchors.isEmpty ? [:] : [.packed: anchors]), now: now,
            acceptUnverifiedAttestation: acceptUnverified)
    }

    func verify(_ builder: RegistrationBuilder, _ verifier: RegistrationVerifier) throws -> VerifiedRegistration {
        try verifier.verify(
            builder.json(), expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
    }

    @Test func verifiedAgainstConfiguredRoot() throws {
        let (leaf, root, _, _) = try pki()
        let result = try verify(builder(), verifier(anchors: [root]))
        #expect(result.attestationFormat == "packed")
        #expect(result.attestationTrust == .basic(certificateChain: [leaf.derRepresentation], verification: .verifiedAgainstRoot))
        // Anchors by AAGUID apply too.
        let byAAGUID = RegistrationVerifier(
            rpID: TestRP.id, allowedOrigins: TestRP.origins,
            trustAnchors: AttestationTrustAnchors(byAAGUID: [[UInt8](repeating: 0xAA, count: 16): [root]]), now: Self.during)
        #expect(try verify(builder(), byAAGUID).attestationTrust
            == .basic(certificateChain: [leaf.derRepresentation], verification: .verifiedAgainstRoot))
    }

    @Test func withoutAnchorsTheChainIsUnverified() throws {
        let (leaf, _, _, _) = try pki()
        let result = try verify(builder(), verifier())
        #expect(result.attestationTrust == .basic(certificateChain: [leaf.derRepresentation], verification: .unverified))
        #expect(throws: WebAuthnError.attestationTrustAnchorMissing("packed")) {
            try verify(builder(), verifier(acceptUnverified: false))
        }
    }

    @Test func wrongRootExpiredAndNotYetValid() throws {
        let (_, root, other, _) = try pki()
        #expect(throws: WebAuthnError.attestationChainInvalid(format: "packed", reason: .untrusted)) {
            try verify(builder(), verifier(anchors: [other]))
        }
        #expect(throws: WebAuthnError.attestationChainInvalid(format: "packed", reason: .expired)) {
            try verify(builder(), verifier(anchors: [root], now: Self.afterExpiry))
        }
        // Validity is checked at `now` even without anchors.
        #expect(throws: WebAuthnError.attestationChainInvalid(format: "packed", reason: .expired)) {
            try verify(builder(), verifier(now: Self.afterExpiry))
        }
    }

    @Test func tamperedSignature() throws {
        #expect(throws: WebAuthnError.attestationInvalid("packed: signature does not verify with the attestation certificate")) {
            try verify(builder().corruptingSignature(), verifier())
        }
    }

    @Test func aaguidExtensionMustMatch() throws {
        #expect(throws: WebAuthnError.attestationInvalid("packed: AAGUID extension does not match authenticator data")) {
            try verify(builder().aaguid([UInt8](repeating: 0xBB, count: 16)), verifier())
        }
    }

    @Test func leafSubjectRequirements() throws {
        // The root signs instead of the leaf: the signature verifies, the subject does not qualify.
        let (_, root, _, _) = try pki()
        let rootKey = try P256.Signing.PrivateKey(pemRepresentation: TestPKI.rootPrivateKeyPEM)
        let builder = try SoftwareAuthenticator().makeRegistration(challenge: challenge)
            .attestation(.packedCertificate(key: rootKey, chain: [root.derRepresentation]))
        #expect(throws: WebAuthnError.attestationInvalid("packed: certificate subject OU is not Authenticator Attestation")) {
            try verify(builder, verifier())
        }
    }

    @Test func wrongChallengeAndRPID() throws {
        #expect(throws: WebAuthnError.challengeMismatch) {
            try verifier().verify(try builder().json(), expectedChallenge: [1, 2, 3], requireUserPresence: true, requireUserVerification: false)
        }
        let otherRP = RegistrationVerifier(rpID: "other.example", allowedOrigins: TestRP.origins)
        #expect(throws: WebAuthnError.rpIDHashMismatch) { try verify(builder(), otherRP) }
    }
}
