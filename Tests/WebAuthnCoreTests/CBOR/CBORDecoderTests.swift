import Testing
import WebAuthnCore

@Suite struct CBORDecoderTests {
    let decoder = CBORDecoder()

    @Test func decodesEveryMajorType() throws {
        let value: CBORValue = .map([
            CBORMapEntry(.int(1), .int(-7)),
            CBORMapEntry(.textString("bytes"), .byteString([1, 2, 3])),
            CBORMapEntry(.textString("list"), .array([.boolean(true), .boolean(false), .null])),
            CBORMapEntry(.textString("big"), .unsigned(UInt64.max)),
            CBORMapEntry(.textString("tag"), .tagged(24, .byteString([0xA0]))),
            CBORMapEntry(.textString("neg"), .negative(1_000_000)),
        ])
        let encoded = CBOREncoder.encode(value)
        #expect(try decoder.decode(encoded) == value)
    }

    @Test func knownEncodings() throws {
        #expect(try decoder.decode([0x00]) == .unsigned(0))
        #expect(try decoder.decode([0x17]) == .unsigned(23))
        #expect(try decoder.decode([0x18, 0x18]) == .unsigned(24))
        #expect(try decoder.decode([0x19, 0x01, 0x00]) == .unsigned(256))
        #expect(try decoder.decode([0x26]) == .int(-7))
        #expect(try decoder.decode([0x39, 0x01, 0x00]) == .int(-257))
        #expect(try decoder.decode([0x63, 0x66, 0x6D, 0x74]) == .textString("fmt"))
        #expect(try decoder.decode([0xA0]) == .map([]))
        #expect(CBORValue.int(-257).intValue == -257)
    }

    @Test(arguments: [
        ([UInt8](), CBORError.truncated),
        ([0x18], .truncated),
        ([0x19, 0x01], .truncated),
        ([0x43, 0x01, 0x02], .lengthTooLarge),
        ([0x82, 0x01], .lengthTooLarge),
        ([0xA1, 0x01], .lengthTooLarge),
        ([0x82, 0x01, 0x18], .truncated),
        ([0xA1, 0x01, 0x39, 0x01], .truncated),
        ([0x01, 0x02], .trailingBytes),
        ([0x5F, 0x41, 0x00, 0xFF], .indefiniteLength),
        ([0x9F, 0xFF], .indefiniteLength),
        ([0xBF, 0xFF], .indefiniteLength),
        ([0x1C], .reservedAdditionalInfo),
        ([0x18, 0x17], .nonMinimalEncoding),
        ([0x19, 0x00, 0xFF], .nonMinimalEncoding),
        ([0x1A, 0x00, 0x00, 0xFF, 0xFF], .nonMinimalEncoding),
        ([0x58, 0x01, 0x00], .nonMinimalEncoding),
        ([0xF9, 0x3C, 0x00], .floatNotSupported),
        ([0xFB, 0, 0, 0, 0, 0, 0, 0, 0], .floatNotSupported),
        ([0xF7], .unsupportedSimpleValue),
        ([0xF0], .unsupportedSimpleValue),
        ([0xA2, 0x01, 0x02, 0x01, 0x03], .duplicateMapKey),
        ([0x62, 0xC3, 0x28], .invalidUTF8),
        // A length near 2^64 must be refused before any allocation.
        ([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .lengthTooLarge),
        ([0x9B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .lengthTooLarge),
        ([0xBA, 0x00, 0x01, 0x00, 0x00, 0x01, 0x02], .lengthTooLarge),
    ])
    func rejectsMalformedInput(bytes: [UInt8], expected: CBORError) {
        #expect(throws: expected) { try decoder.decode(bytes) }
    }

    @Test func rejectsDeepNesting() throws {
        let deep = [UInt8](repeating: 0x81, count: 17) + [0x00]
        #expect(throws: CBORError.nestingTooDeep) { try decoder.decode(deep) }
        let ok = [UInt8](repeating: 0x81, count: 16) + [0x00]
        _ = try decoder.decode(ok)
        let deepTags = [UInt8](repeating: 0xC1, count: 100) + [0x00]
        #expect(throws: CBORError.nestingTooDeep) { try decoder.decode(deepTags) }
    }

    @Test func rejectsTooManyItems() {
        let small = CBORDecoder(maxItems: 10)
        let array = [0x8B] + [UInt8](repeating: 0x00, count: 11)
        #expect(throws: CBORError.tooManyItems) { try small.decode(array) }
    }

    @Test func rejectsOversizedInput() {
        let small = CBORDecoder(maxInputLength: 4)
        #expect(throws: CBORError.lengthTooLarge) { try small.decode([0x44, 1, 2, 3, 4]) }
    }

    @Test func decodePrefixReportsConsumedLength() throws {
        let (value, used) = try decoder.decodePrefix([0x82, 0x01, 0x02, 0xFF, 0xFF])
        #expect(value == .array([.int(1), .int(2)]))
        #expect(used == 3)
    }

    @Test func wrongTypeAccessorsReturnNil() throws {
        let value = try decoder.decode([0x01])
        #expect(value.bytesValue == nil)
        #expect(value.stringValue == nil)
        #expect(value.mapValue == nil)
        #expect(value[intKey: 1] == nil)
    }
}
