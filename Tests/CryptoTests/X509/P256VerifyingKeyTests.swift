import Foundation
import Testing
import Crypto

@Suite struct P256VerifyingKeyTests {
    @Test func pointVerifiesDERSignatures() throws {
        let key = try P256.Signing.PrivateKey()
        let other = try P256.Signing.PrivateKey()
        let message = Array("signed bytes".utf8)
        let signature = try key.signature(for: message).derRepresentation
        let point = try key.publicKey.x963Representation
        #expect(P256.Signing.isValidSignature(derRepresentation: signature, for: message, publicKeyPoint: point))
        #expect(!P256.Signing.isValidSignature(derRepresentation: signature, for: message + [0], publicKeyPoint: point))
        let otherPoint = try other.publicKey.x963Representation
        #expect(!P256.Signing.isValidSignature(derRepresentation: signature, for: message, publicKeyPoint: otherPoint))
        #expect(P256.Signing.isValidSignature(derRepresentation: signature, for: message, publicKeyPoint: point))
    }

    @Test func offCurveAndMalformedPointsNeverVerify() throws {
        let key = try P256.Signing.PrivateKey()
        let message = Array("signed bytes".utf8)
        let signature = try key.signature(for: message).derRepresentation
        let point = try key.publicKey.x963Representation
        var offCurve = point
        offCurve[64] ^= 0x01
        var compressed = point
        compressed[0] = 0x02
        for bad in [offCurve, Array(point.prefix(64)), compressed, point + [0], [0x00], []] {
            #expect(!P256.Signing.isValidSignature(derRepresentation: signature, for: message, publicKeyPoint: bad))
        }
    }

    @Test func nonDERSignaturesDoNotVerify() throws {
        let key = try P256.Signing.PrivateKey()
        let message = Array("signed bytes".utf8)
        let signature = try key.signature(for: message)
        let point = try key.publicKey.x963Representation
        func verifies(_ bytes: [UInt8]) -> Bool {
            P256.Signing.isValidSignature(derRepresentation: bytes, for: message, publicKeyPoint: point)
        }
        #expect(verifies(signature.derRepresentation))
        #expect(!verifies(signature.rawRepresentation))
        #expect(!verifies(signature.derRepresentation + [0]))
        // BER long-form length for the SEQUENCE: same values, not DER.
        let der = signature.derRepresentation
        #expect(!verifies([0x30, 0x81] + der.dropFirst()))
        #expect(!verifies([]))
        #expect(!verifies([UInt8](repeating: 0x30, count: 73)))
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
