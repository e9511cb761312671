import Foundation
import Testing
import Crypto
@testable import WebAuthnTestSupport

@Suite struct CertificateTests {
    static let during = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15
    static let afterLeafExpiry = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15
    static let beforeLeafValidity = Date(timeIntervalSince1970: 1_720_000_000)  // 2024-07-03

    @Test func parsesLeafFields() throws {
        let leaf = try Certificate(pemRepresentation: TestPKI.leafPEM)
        #expect(leaf.version == 3)
        #expect(leaf.serialNumber == [0x10, 0x02])
        #expect(leaf.subject.countryName == "US")
        #expect(leaf.subject.organizationName == "Example Authenticators")
        #expect(leaf.subject.organizationalUnitName == "Authenticator Attestation")
        #expect(leaf.subject.commonName == "Example Software Authenticator")
        #expect(!leaf.subject.isEmpty)
        #expect(leaf.issuer.commonName == "Example Attestation Root")
        #expect(leaf.notValidBefore == Date(timeIntervalSince1970: 1_735_689_600))
        #expect(leaf.notValidAfter == Date(timeIntervalSince1970: 1_767_225_600))
        let constraints = try #require(try leaf.basicConstraints)
        #expect(!constraints.isCertificateAuthority)
        let root = try Certificate(pemRepresentation: TestPKI.rootPEM)
        #expect(try root.basicConstraints?.isCertificateAuthority == true)
        guard case .p256 = try leaf.publicKey else {
            Issue.record("leaf key is not P-256")
            return
        }
    }

    @Test func extensionLookupByOID() throws {
        let leaf = try Certificate(pemRepresentation: TestPKI.leafPEM)
        let aaguid = try #require(leaf.extension(oid: "1.3.6.1.4.1.45724.1.1.4"))
        #expect(!aaguid.isCritical)
        var reader = try DERReader(aaguid.value)
        #expect(try reader.readOctetString() == [UInt8](repeating: 0xAA, count: 16))
        try reader.finish()
        let basic = try #require(leaf.extension(oid: "2.5.29.19"))
        #expect(basic.isCritical)
        #expect(leaf.extension(oid: "1.2.840.113635.100.8.2") == nil)
    }

    @Test func derAndPEMRoundTrip() throws {
        let leaf = try Certificate(pemRepresentation: TestPKI.leafPEM)
        #expect(try Certificate(derRepresentation: leaf.derRepresentation) == leaf)
        #expect(try Certificate(pemRepresentation: leaf.pemRepresentation) == leaf)
    }

    @Test func malformedInputIsRefused() throws {
        let leaf = try Certificate(pemRepresentation: TestPKI.leafPEM)
        #expect(throws: CertificateError.self) { try Certificate(derRepresentation: leaf.derRepresentation + [0]) }
        #expect(throws: CertificateError.self) { try Certificate(derRepresentation: Array(leaf.derRepresentation.dropLast())) }
        #expect(throws: CertificateError.self) { try Certificate(derRepresentation: [UInt8]()) }
        #expect(throws: CertificateError.invalidPEM) { try Certificate(pemRepresentation: TestPKI.leafPrivateKeyPEM) }
        // Every truncation fails with an error, never a crash.
        for length in stride(from: 0, to: leaf.derRepresentation.count, by: 7) {
            #expect(throws: CertificateError.self) { try Certificate(derRepresentation: leaf.derRepresentation.prefix(length)) }
        }
    }

    @Test func signatureWithCertificateKey() throws {
        let leaf = try Certificate(pemRepresentation: TestPKI.leafPEM)
        let key = try P256.Signing.PrivateKey(pemRepresentation: TestPKI.leafPrivateKeyPEM)
        let message = Array("attested data".utf8)
        let signature = try key.signature(for: message).derRepresentation
        #expect(leaf.isValidSignature(signature, for: message, algorithm: .ecdsaP256SHA256))
        #expect(!leaf.isValidSignature(signature, for: message + [1], algorithm: .ecdsaP256SHA256))
        // The key type must match the algorithm.
        #expect(!leaf.isValidSignature(signature, for: message, algorithm: .ecdsaP384SHA384))
        #expect(!leaf.isValidSignature(signature, for: message, algorithm: .rsaPKCS1v15(.sha256)))
        #expect(!leaf.isValidSignature(signature, for: message, algorithm: .ed25519))
    }

    @Test func chainVerifiesAgainstRoot() throws {
        let leaf = try Certificate(pemRepresentation: TestPKI.leafPEM)
        let root = try Certificate(pemRepresentation: TestPKI.rootPEM)
        try CertificateChain(leaf: leaf).verify(trustAnchors: [root], at: Self.during)
        // The root may also be sent along in the chain.
        try CertificateChain(leaf: leaf, intermediates: [root]).verify(trustAnchors: [root], at: Self.during)
    }

    @Test func chainFailures() throws {
        let leaf = try Certificate(pemRepresentation: TestPKI.leafPEM)
        let root = try Certificate(pemRepresentation: TestPKI.rootPEM)
        let other = try Certificate(pemRepresentation: TestPKI.otherRootPEM)
        let chain = CertificateChain(leaf: leaf)
        #expect(throws: CertificateChainError.expired) { try chain.verify(trustAnchors: [root], at: Self.afterLeafExpiry) }
        #expect(throws: CertificateChainError.notYetValid) {
            try chain.verify(trustAnchors: [root], at: Self.beforeLeafValidity)
        }
        #expect(throws: CertificateChainError.untrusted) { try chain.verify(trustAnchors: [other], at: Self.during) }
        #expect(throws: CertificateChainError.noTrustAnchors) { try chain.verify(trustAnchors: [], at: Self.during) }
        // An intermediate offered by the sender is not a trust anchor.
        #expect(throws: CertificateChainError.untrusted) {
            try CertificateChain(leaf: leaf, intermediates: [root]).verify(trustAnchors: [other], at: Self.during)
        }
    }
}

@Suite struct DERReaderTests {
    @Test func readsNestedStructures() throws {
        // SEQUENCE { INTEGER 2, ENUMERATED 1, OCTET STRING 01 02, [702] { INTEGER 0 }, SET { INTEGER 2 }, BOOLEAN TRUE, OID 1.2.840.113635.100.8.2 }
        let bytes: [UInt8] = [
            0x30, 0x24, 0x02, 0x01, 0x02, 0x0A, 0x01, 0x01, 0x04, 0x02, 0x01, 0x02,
            0xBF, 0x85, 0x3E, 0x03, 0x02, 0x01, 0x00, 0x31, 0x03, 0x02, 0x01, 0x02, 0x01, 0x01, 0xFF,
            0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x08, 0x02,
        ]
        var outer = try DERReader(bytes)
        var sequence = try outer.readSequence()
        try outer.finish()
        #expect(try sequence.readInteger() == 2)
        #expect(try sequence.readEnumerated() == 1)
        #expect(try sequence.readOctetString() == [1, 2])
        #expect(try sequence.readOptionalExplicit(tag: 600) == nil)
        var origin = try #require(try sequence.readOptionalExplicit(tag: 702))
        #expect(try origin.readInteger() == 0)
        var set = try sequence.readSet()
        #expect(try set.readInteger() == 2)
        #expect(try sequence.readBoolean())
        #expect(try sequence.readObjectIdentifier() == "1.2.840.113635.100.8.2")
        try sequence.finish()
    }

    @Test(arguments: [
        ([0x30, 0x80, 0x00, 0x00] as [UInt8], "indefinite length"),
        ([0x04, 0x81, 0x05, 1, 2, 3, 4, 5], "non-minimal long length"),
        ([0x04, 0x05, 1, 2], "truncated value"),
        ([0x02, 0x02, 0x00, 0x01], "non-minimal INTEGER"),
        ([0x01, 0x01, 0x01], "BOOLEAN not 00/FF"),
        ([0x06, 0x02, 0x80, 0x01], "non-minimal OID arc"),
        ([0x02, 0x01, 0x01, 0x00], "trailing data"),
    ])
    func strictDERRefusals(bytes: [UInt8], label: String) throws {
        #expect(throws: DERError.self, "\(label)") {
            var reader = try DERReader(bytes)
            let tag = try #require(try reader.peekTag())
            switch tag.tagNumber {
            case 0x02: _ = try reader.readInteger()
            case 0x01: _ = try reader.readBoolean()
            case 0x06: _ = try reader.readObjectIdentifier()
            case 0x04: _ = try reader.readOctetString()
            default: _ = try reader.readSequence()
            }
            try reader.finish()
        }
    }

    @Test func nestingIsBounded() throws {
        var bytes: [UInt8] = [0x05, 0x00]
        for _ in 0..<40 { bytes = [0x30, UInt8(bytes.count)] + bytes }
        #expect(throws: DERError.tooDeep) {
            var reader = try DERReader(bytes)
            for _ in 0..<40 { reader = try reader.readSequence() }
        }
    }

    @Test func wrongTagNamesExpectation() throws {
        var reader = try DERReader([0x04, 0x00])
        #expect(throws: DERError.unexpectedTag(expected: "INTEGER", found: "universal 4")) { try reader.readInteger() }
    }
}
