/// A strict decoder for the CBOR that authenticators produce.
///
/// Every length is checked against the remaining input before anything is
/// allocated, so hostile lengths cannot cause large allocations or traps.
public struct CBORDecoder: Sendable {
    /// Deepest allowed nesting of arrays, maps and tags.
    public var maxDepth: Int
    /// Most data items allowed in one decode, counting every nested item.
    public var maxItems: Int
    /// Largest input accepted at all; attestation objects with certificate
    /// chains stay well below the default.
    public var maxInputLength: Int

    public init(maxDepth: Int = 16, maxItems: Int = 4096, maxInputLength: Int = 65_536) {
        self.maxDepth = maxDepth
        self.maxItems = maxItems
        self.maxInputLength = maxInputLength
    }

    /// Decodes exactly one item that spans all of `bytes`.
    public func decode(_ bytes: [UInt8]) throws(CBORError) -> CBORValue {
        let (value, consumed) = try decodePrefix(bytes)
        guard consumed == bytes.count else { throw .trailingBytes }
        return value
    }

    /// Decodes the first item of `bytes` and reports how many bytes it used.
    ///
    /// Authenticator data places a COSE key and an extensions map back to back
    /// without lengths, so its parser needs to know where each item ends.
    public func decodePrefix(_ bytes: [UInt8]) throws(CBORError) -> (value: CBORValue, consumed: Int) {
        guard bytes.count <= maxInputLength else { throw .lengthTooLarge }
        var reader = Reader(bytes: bytes, maxDepth: maxDepth, maxItems: maxItems)
        let value = try reader.readItem(depth: 0)
        return (value, reader.offset)
    }
}

private struct Reader {
    let bytes: [UInt8]
    let maxDepth: Int
    let maxItems: Int
    var offset = 0
    var items = 0

    init(bytes: [UInt8], maxDepth: Int, maxItems: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.maxItems = maxItems
    }

    var remaining: Int { bytes.count - offset }

    mutating func readByte() throws(CBORError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readBytes(_ count: Int) throws(CBORError) -> [UInt8] {
        guard count <= remaining else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// Reads the argument that follows the initial byte, refusing non-shortest forms.
    mutating func readArgument(_ info: UInt8) throws(CBORError) -> UInt64 {
        switch info {
        case 0...23:
            return UInt64(info)
        case 24:
            let value = UInt64(try readByte())
            guard value >= 24 else { throw .nonMinimalEncoding }
            return value
        case 25, 26, 27:
            let width = 1 << Int(info - 24)  // 2, 4 or 8 bytes
            let raw = try readBytes(width)
            let value = raw.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
            let floor: UInt64 = width == 2 ? 0xFF : width == 4 ? 0xFFFF : 0xFFFF_FFFF
            guard value > floor else { throw .nonMinimalEncoding }
            return value
        case 31:
            throw .indefiniteLength
        default:
            throw .reservedAdditionalInfo
        }
    }

    /// Converts a declared length to `Int` after checking it fits the input;
    /// every element of an array or map needs at least one byte.
    func checkedLength(_ length: UInt64, minimumBytesEach: Int) throws(CBORError) -> Int {
        guard length <= UInt64(remaining / minimumBytesEach) else { throw .lengthTooLarge }
        return Int(length)
    }

    mutating func readItem(depth: Int) throws(CBORError) -> CBORValue {
        items += 1
        guard items <= maxItems else { throw .tooManyItems }
        let initial = try readByte()
        let major = initial >> 5
        let info = initial & 0x1F

        if major == 7 {
            switch info {
            case 20: return .boolean(false)
            case 21: return .boolean(true)
            case 22: return .null
            case 25, 26, 27: throw .floatNotSupported
            case 31: throw .indefiniteLength
            case 28, 29, 30: throw .reservedAdditionalInfo
            default: throw .unsupportedSimpleValue
            }
        }

        let argument = try readArgument(info)
        switch major {
        case 0:
            return .unsigned(argument)
        case 1:
            return .negative(argument)
        case 2:
            let length = try checkedLength(argument, minimumBytesEach: 1)
            return .byteString(try readBytes(length))
        case 3:
            let length = try checkedLength(argument, minimumBytesEach: 1)
            let raw = try readBytes(length)
            guard let string = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8 }
            return .textString(string)
        case 4:
            guard depth < maxDepth else { throw .nestingTooDeep }
            let count = try checkedLength(argument, minimumBytesEach: 1)
            var elements: [CBORValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count {
                elements.append(try readItem(depth: depth + 1))
            }
            return .array(elements)
        case 5:
            guard depth < maxDepth else { throw .nestingTooDeep }
            let count = try checkedLength(argument, minimumBytesEach: 2)
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(count)
            var seen = Set<CBORValue>()
            for _ in 0..<count {
                let key = try readItem(depth: depth + 1)
                guard seen.insert(key).inserted else { throw .duplicateMapKey }
                let value = try readItem(depth: depth + 1)
                entries.append(CBORMapEntry(key, value))
            }
            return .map(entries)
        default:  // 6: tag
            guard depth < maxDepth else { throw .nestingTooDeep }
            return .tagged(argument, try readItem(depth: depth + 1))
        }
    }
}
