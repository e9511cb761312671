import Testing
import WebAuthnCore

@Suite struct COSEKeyTests {
    static let x = [UInt8](repeating: 1, count: 32)
    static let y = [UInt8](repeating: 2, count: 32)

    @Test(arguments: [
        COSEKey.ec2P256(x: x, y: y),
        .okpEd25519(x: x),
        .rsa(n: [UInt8](repeating: 0xC1, count: 256), e: [1, 0, 1], algorithm: .rs256),
        .rsa(n: [UInt8](repeating: 0xC1, count: 256), e: [1, 0, 1], algorithm: .ps256),
    ])
    func roundTrips(key: COSEKey) throws {
        let decoded = try COSEKey(cbor: CBOREncoder.encode(key.cbor))
        #expect(decoded == key)
    }

    static func map(_ entries: [(Int, CBORValue)]) -> [UInt8] {
        CBOREncoder.encode(.map(entries.map { CBORMapEntry(.int($0.0), $0.1) }))
    }

    @Test func unsupportedKeyTypesAndAlgorithms() {
        // ES384 on P-384.
        let es384 = Self.map([(1, .int(2)), (3, .int(-35)), (-1, .int(2)), (-2, .byteString(Self.x)), (-3, .byteString(Self.y))])
        #expect(throws: WebAuthnError.unsupportedAlgorithm) { try COSEKey(cbor: es384) }
        // ES256 declared on a P-384 curve.
        let wrongCurve = Self.map([(1, .int(2)), (3, .int(-7)), (-1, .int(2)), (-2, .byteString(Self.x)), (-3, .byteString(Self.y))])
        #expect(throws: WebAuthnError.unsupportedAlgorithm) { try COSEKey(cbor: wrongCurve) }
        // EdDSA declared on X25519.
        let x25519 = Self.map([(1, .int(1)), (3, .int(-8)), (-1, .int(4)), (-2, .byteString(Self.x))])
        #expect(throws: WebAuthnError.unsupportedAlgorithm) { try COSEKey(cbor: x25519) }
        // EC2 key claiming an RSA algorithm.
        let mixed = Self.map([(1, .int(2)), (3, .int(-257)), (-1, .int(1)), (-2, .byteString(Self.x)), (-3, .byteString(Self.y))])
        #expect(throws: WebAuthnError.unsupportedAlgorithm) { try COSEKey(cbor: mixed) }
    }

    @Test func malformedKeys() {
        let shortX = Self.map([(1, .int(2)), (3, .int(-7)), (-1, .int(1)), (-2, .byteString([1])), (-3, .byteString(Self.y))])
        #expect(throws: WebAuthnError.invalidCredentialPublicKey) { try COSEKey(cbor: shortX) }
        let missingY = Self.map([(1, .int(2)), (3, .int(-7)), (-1, .int(1)), (-2, .byteString(Self.x))])
        #expect(throws: WebAuthnError.invalidCredentialPublicKey) { try COSEKey(cbor: missingY) }
        let missingAlg = Self.map([(1, .int(2)), (-1, .int(1))])
        #expect(throws: WebAuthnError.invalidCredentialPublicKey) { try COSEKey(cbor: missingAlg) }
        let textX = Self.map([(1, .int(1)), (3, .int(-8)), (-1, .int(6)), (-2, .textString("x"))])
        #expect(throws: WebAuthnError.invalidCredentialPublicKey) { try COSEKey(cbor: textX) }
        #expect(throws: WebAuthnError.invalidCredentialPublicKey) { try COSEKey(cbor: [0x80]) }
        #expect(throws: WebAuthnError.malformedCBOR(.truncated)) { try COSEKey(cbor: [0xA1, 0x01, 0x18]) }
        #expect(throws: WebAuthnError.malformedCBOR(.lengthTooLarge)) { try COSEKey(cbor: [0xA5, 0x01]) }
        #expect(throws: WebAuthnError.malformedCBOR(.trailingBytes)) {
            try COSEKey(cbor: CBOREncoder.encode(COSEKey.okpEd25519(x: Self.x).cbor) + [0x00])
        }
    }
}
