/// Why DER input was refused.
public enum DERError: Error, Equatable, Sendable {
    /// The input ends inside a tag, length or value.
    case truncated
    /// Indefinite length, a length that is not minimally encoded, or a length beyond the limit.
    case invalidLength
    /// The element's tag is not the one the structure requires here.
    case unexpectedTag(expected: String, found: String)
    /// The value is not a valid encoding of its type (e.g. a non-minimal INTEGER, a BOOLEAN
    /// other than 00/FF, an OID that does not fit).
    case invalidValue(String)
    /// Nesting deeper than the reader allows.
    case tooDeep
    /// Bytes remain after the last expected element.
    case trailingData
}

/// The class bits of a DER tag.
public enum DERTagClass: UInt8, Sendable, Equatable {
    case universal = 0, application = 1, contextSpecific = 2, `private` = 3
}

/// One tag-length-value element.
public struct DERElement: Sendable, Equatable {
    public var tagClass: DERTagClass
    public var isConstructed: Bool
    public var tagNumber: UInt32
    /// The value bytes (without tag and length).
    public var contents: [UInt8]
    let depth: Int

    /// A reader over a constructed element's children.
    public func children() throws(DERError) -> DERReader {
        guard isConstructed else { throw .invalidValue("primitive element has no children") }
        return try DERReader(contents, depth: depth + 1)
    }

    var tagDescription: String {
        switch tagClass {
        case .universal: "universal \(tagNumber)"
        case .application: "application \(tagNumber)"
        case .contextSpecific: "[\(tagNumber)]"
        case .private: "private \(tagNumber)"
        }
    }
}

/// A small, strict DER reader for the certificate extensions WebAuthn attestation needs
/// (Android `KeyDescription`, Apple's nonce, TPM subject alternative names).
///
/// Strict means DER, not BER: definite minimal lengths only, minimal INTEGERs, BOOLEAN as
/// 00/FF. Every length is checked against the remaining input before anything is copied,
/// and nesting is bounded, so hostile input fails with a `DERError` instead of trapping.
public struct DERReader: Sendable {
    /// Deepest nesting accepted.
    public static let maxDepth = 32
    /// Largest input accepted (attestation extensions are a few hundred bytes).
    public static let maxInputLength = 1 << 20

    private let bytes: [UInt8]
    private var offset = 0
    private let depth: Int

    /// A reader over `bytes`, which hold zero or more consecutive elements.
    public init(_ bytes: [UInt8]) throws(DERError) {
        try self.init(bytes, depth: 0)
    }

    init(_ bytes: [UInt8], depth: Int) throws(DERError) {
        guard depth <= Self.maxDepth else { throw .tooDeep }
        guard bytes.count <= Self.maxInputLength else { throw .invalidLength }
        self.bytes = bytes
        self.depth = depth
    }

    /// True when every element has been read.
    public var isAtEnd: Bool { offset >= bytes.count }

    /// Throws unless every element has been read.
    public func finish() throws(DERError) {
        guard isAtEnd else { throw .trailingData }
    }

    // MARK: Elements

    /// The next element's tag without consuming it; nil at the end.
    public func peekTag() throws(DERError) -> (tagClass: DERTagClass, isConstructed: Bool, tagNumber: UInt32)? {
        guard !isAtEnd else { return nil }
        var copy = self
        let header = try copy.readHeader()
        return (header.tagClass, header.isConstructed, header.tagNumber)
    }

    /// Reads the next element whatever its tag.
    public mutating func readElement() throws(DERError) -> DERElement {
        let header = try readHeader()
        let end = offset + header.length
        let contents = Array(bytes[offset..<end])
        offset = end
        return DERElement(
            tagClass: header.tagClass, isConstructed: header.isConstructed, tagNumber: header.tagNumber,
            contents: contents, depth: depth)
    }

    private mutating func readHeader() throws(DERError) -> (
        tagClass: DERTagClass, isConstructed: Bool, tagNumber: UInt32, length: Int
    ) {
        let first = try nextByte()
        let tagClass = DERTagClass(rawValue: first >> 6) ?? .universal
        let isConstructed = first & 0x20 != 0
        var tagNumber = UInt32(first & 0x1F)
        if tagNumber == 0x1F {
            // High tag number form: base-128, no leading 0x80, at most 4 bytes.
            tagNumber = 0
            var count = 0
            while true {
                let byte = try nextByte()
                if count == 0, byte == 0x80 { throw .invalidValue("non-minimal tag number") }
                count += 1
                guard count <= 4 else { throw .invalidValue("tag number too large") }
                tagNumber = tagNumber << 7 | UInt32(byte & 0x7F)
                if byte & 0x80 == 0 { break }
            }
            guard tagNumber >= 0x1F else { throw .invalidValue("non-minimal tag number") }
        }
        let lengthByte = try nextByte()
        var length = 0
        if lengthByte < 0x80 {
            length = Int(lengthByte)
        } else {
            let count = Int(lengthByte & 0x7F)
            // 0x80 is BER's indefinite length; more than 3 length bytes is beyond any limit here.
            guard count >= 1, count <= 3 else { throw .invalidLength }
            for index in 0..<count {
                let byte = try nextByte()
                if index == 0, byte == 0 { throw .invalidLength }
                length = length << 8 | Int(byte)
            }
            guard length >= 0x80 else { throw .invalidLength }
        }
        guard length <= bytes.count - offset else { throw .truncated }
        return (tagClass, isConstructed, tagNumber, length)
    }

    private mutating func nextByte() throws(DERError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads an element and checks its universal tag.
    private mutating func read(universal tag: UInt32, constructed: Bool, name: String) throws(DERError) -> DERElement {
        let element = try readElement()
        guard element.tagClass == .universal, element.tagNumber == tag, element.isConstructed == constructed else {
            throw .unexpectedTag(expected: name, found: element.tagDescription)
        }
        return element
    }

    // MARK: Typed reads

    /// SEQUENCE: a reader over its members.
    public mutating func readSequence() throws(DERError) -> DERReader {
        try read(universal: 0x10, constructed: true, name: "SEQUENCE").children()
    }

    /// SET (and SET OF): a reader over its members.
    public mutating func readSet() throws(DERError) -> DERReader {
        try read(universal: 0x11, constructed: true, name: "SET").children()
    }

    /// INTEGER as its minimal two's complement big-endian bytes.
    public mutating func readIntegerBytes() throws(DERError) -> [UInt8] {
        let value = try read(universal: 0x02, constructed: false, name: "INTEGER").contents
        try Self.checkMinimalInteger(value)
        return value
    }

    /// INTEGER that fits in `Int`.
    public mutating func readInteger() throws(DERError) -> Int {
        try Self.smallInteger(readIntegerBytes())
    }

    /// ENUMERATED that fits in `Int`.
    public mutating func readEnumerated() throws(DERError) -> Int {
        let value = try read(universal: 0x0A, constructed: false, name: "ENUMERATED").contents
        try Self.checkMinimalInteger(value)
        return try Self.smallInteger(value)
    }

    /// BOOLEAN (DER: 0x00 or 0xFF only).
    public mutating func readBoolean() throws(DERError) -> Bool {
        let value = try read(universal: 0x01, constructed: false, name: "BOOLEAN").contents
        guard value.count == 1, value[0] == 0x00 || value[0] == 0xFF else { throw .invalidValue("BOOLEAN") }
        return value[0] == 0xFF
    }

    /// NULL.
    public mutating func readNull() throws(DERError) {
        let value = try read(universal: 0x05, constructed: false, name: "NULL").contents
        guard value.isEmpty else { throw .invalidValue("NULL") }
    }

    /// OCTET STRING (primitive form only, as DER requires).
    public mutating func readOctetString() throws(DERError) -> [UInt8] {
        try read(universal: 0x04, constructed: false, name: "OCTET STRING").contents
    }

    /// OBJECT IDENTIFIER in dotted form ("1.3.6.1.4.1.11129.2.1.17").
    public mutating func readObjectIdentifier() throws(DERError) -> String {
        try Self.dottedOID(read(universal: 0x06, constructed: false, name: "OBJECT IDENTIFIER").contents)
    }

    /// An EXPLICIT context-specific `[tag]`: a reader over the wrapped element(s).
    public mutating func readExplicit(tag: UInt32) throws(DERError) -> DERReader {
        let element = try readElement()
        guard element.tagClass == .contextSpecific, element.tagNumber == tag, element.isConstructed else {
            throw .unexpectedTag(expected: "[\(tag)]", found: element.tagDescription)
        }
        return try element.children()
    }

    /// Like `readExplicit(tag:)` when the next element is `[tag]`; otherwise nil and nothing is consumed.
    public mutating func readOptionalExplicit(tag: UInt32) throws(DERError) -> DERReader? {
        guard let next = try peekTag(), next.tagClass == .contextSpecific, next.tagNumber == tag else { return nil }
        return try readExplicit(tag: tag)
    }

    // MARK: Value checks

    static func checkMinimalInteger(_ value: [UInt8]) throws(DERError) {
        guard !value.isEmpty else { throw .invalidValue("empty INTEGER") }
        if value.count > 1,
            (value[0] == 0x00 && value[1] & 0x80 == 0) || (value[0] == 0xFF && value[1] & 0x80 != 0)
        {
            throw .invalidValue("non-minimal INTEGER")
        }
    }

    static func smallInteger(_ value: [UInt8]) throws(DERError) -> Int {
        guard value.count <= 8 else { throw .invalidValue("INTEGER too large") }
        var result: Int64 = value[0] & 0x80 != 0 ? -1 : 0
        for byte in value { result = result << 8 | Int64(byte) }
        return Int(result)
    }

    static func dottedOID(_ value: [UInt8]) throws(DERError) -> String {
        guard !value.isEmpty, value.count <= 64 else { throw .invalidValue("OBJECT IDENTIFIER length") }
        var arcs: [UInt64] = []
        var current: UInt64 = 0
        var started = false
        for byte in value {
            if !started, byte == 0x80 { throw .invalidValue("non-minimal OBJECT IDENTIFIER arc") }
            started = true
            guard current >> 57 == 0 else { throw .invalidValue("OBJECT IDENTIFIER arc too large") }
            current = current << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                arcs.append(current)
                current = 0
                started = false
            }
        }
        guard !started else { throw .invalidValue("truncated OBJECT IDENTIFIER") }
        let first = arcs[0]
        let head: [UInt64] = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80]
        return (head + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }
}
