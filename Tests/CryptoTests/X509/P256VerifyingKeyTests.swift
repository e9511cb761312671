import Foundation
import Testing
import Crypto

@Suite struct P256VerifyingKeyTests {
    @Test func pointKeyVerifiesDERSignatures() throws {
        let key = try P256.Signing.PrivateKey()
        let other = try P256.Signing.PrivateKey()
        let message = Array("signed bytes".utf8)
        let signature = try key.signature(for: message).derRepresentation
        let point = try key.publicKey.x963Representation
        let publicKey = try P256.Signing.PublicKey(verifyingKeyPoint: point)
        #expect(try publicKey.x963Representation == point)
        #expect(publicKey.isValidSignature(derRepresentation: signature, for: message))
        #expect(!publicKey.isValidSignature(derRepresentation: signature, for: message + [0]))
        // Keys built one after the other from the shared parameters stay distinct.
        let otherKey = try P256.Signing.PublicKey(verifyingKeyPoint: try other.publicKey.x963Representation)
        #expect(!otherKey.isValidSignature(derRepresentation: signature, for: message))
        #expect(publicKey.isValidSignature(derRepresentation: signature, for: message))
    }

    @Test func offCurveAndMalformedPointsAreRefused() throws {
        var point = try P256.Signing.PrivateKey().publicKey.x963Representation
        point[64] ^= 0x01
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PublicKey(verifyingKeyPoint: point) }
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PublicKey(verifyingKeyPoint: point.prefix(64)) }
        var compressed = point
        compressed[0] = 0x02
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PublicKey(verifyingKeyPoint: compressed) }
    }

    @Test func nonDERSignaturesDoNotVerify() throws {
        let key = try P256.Signing.PrivateKey()
        let message = Array("signed bytes".utf8)
        let signature = try key.signature(for: message)
        let publicKey = try P256.Signing.PublicKey(verifyingKeyPoint: try key.publicKey.x963Representation)
        #expect(!publicKey.isValidSignature(derRepresentation: signature.rawRepresentation, for: message))
        #expect(!publicKey.isValidSignature(derRepresentation: signature.derRepresentation + [0], for: message))
        // BER long-form length for the SEQUENCE: same values, not DER.
        let der = signature.derRepresentation
        let ber = [0x30, 0x81] + der.dropFirst()
        #expect(!publicKey.isValidSignature(derRepresentation: Array(ber), for: message))
        #expect(!publicKey.isValidSignature(derRepresentation: [], for: message))
    }

    @Test func p384CertificateKey() throws {
        // Apple WebAuthn Root CA (a public root certificate): a P-384 key.
        let root = try Certificate(pemRepresentation: """
            -----BEGIN CERTIFICATE-----
            MIICEjCCAZmgAwIBAgIQaB0BbHo84wIlpQGUKEdXcTAKBggqhkjOPQQDAzBLMR8w
            HQYDVQQDDBZBcHBsZSBXZWJBdXRobiBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJ
            bmMuMRMwEQYDVQQIDApDYWxpZm9ybmlhMB4XDTIwMDMxODE4MjEzMloXDTQ1MDMx
            NTAwMDAwMFowSzEfMB0GA1UEAwwWQXBwbGUgV2ViQXV0aG4gUm9vdCBDQTETMBEG
            A1UECgwKQXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTB2MBAGByqGSM49
            AgEGBSuBBAAiA2IABCJCQ2pTVhzjl4Wo6IhHtMSAzO2cv+H9DQKev3//fG59G11k
            xu9eI0/7o6V5uShBpe1u6l6mS19S1FEh6yGljnZAJ+2GNP1mi/YK2kSXIuTHjxA/
            pcoRf7XkOtO4o1qlcaNCMEAwDwYDVR0TAQH/BAUwAwEB/zAdBgNVHQ4EFgQUJtdk
            2cV4wlpn0afeaxLQG2PxxtcwDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2cA
            MGQCMFrZ+9DsJ1PW9hfNdBywZDsWDbWFp28it1d/5w2RPkRX3Bbn/UbDTNLx7Jr3
            jAGGiQIwHFj+dJZYUJR786osByBelJYsVZd2GbHQu209b5RCmGQ21gpSAk9QZW4B
            1bWeT0vT
            -----END CERTIFICATE-----
            """)
        #expect(root.subject.commonName == "Apple WebAuthn Root CA")
        #expect(root.subject.isEmpty == false)
        guard case .p384(let key) = try root.publicKey else {
            Issue.record("expected a P-384 key")
            return
        }
        #expect(try key.x963Representation.count == 97)
        #expect(try root.basicConstraints?.isCertificateAuthority == true)
        // A self-signed root verifies against itself.
        try CertificateChain(leaf: root).verify(trustAnchors: [root], at: Date(timeIntervalSince1970: 1_700_000_000))
    }
}
