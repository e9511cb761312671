import Foundation

/// A Swift value that can be bound as a query parameter.
public protocol PostgresEncodable: Sendable {
    /// The value in PostgreSQL's text input format with its type OID.
    var postgresBinding: PostgresBinding { get }
}

/// A Swift value that can be read from a column in PostgreSQL's text output format.
public protocol PostgresDecodable {
    /// Decodes a non-NULL value; nil when the text is not a valid value of this type.
    init?(postgresText text: String)
    /// The value SQL NULL decodes to, or nil when NULL is not acceptable (everything but Optional).
    static var postgresNull: Self? { get }
}

extension PostgresDecodable {
    public static var postgresNull: Self? { nil }
}

/// Well-known type OIDs (`pg_type.oid`), fixed since PostgreSQL 7.
enum PostgresOID {
    static let unknown: UInt32 = 0
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let int8: UInt32 = 20
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let float8: UInt32 = 701
    static let int8Array: UInt32 = 1016
    static let textArray: UInt32 = 1009
    static let timestamptz: UInt32 = 1184
    static let uuid: UInt32 = 2950
    static let uuidArray: UInt32 = 2951
}

// MARK: - Optional: NULL

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresBinding: PostgresBinding {
        switch self {
        case .some(let value): value.postgresBinding
        case .none: PostgresBinding(typeOID: PostgresOID.unknown, text: nil)
        }
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init?(postgresText text: String) {
        guard let value = Wrapped(postgresText: text) else { return nil }
        self = .some(value)
    }

    public static var postgresNull: Wrapped?? { .some(nil) }
}

// MARK: - Text

extension String: PostgresEncodable, PostgresDecodable {
    /// Sent as `unknown` so the server types it from context (text, varchar, citext, jsonb casts …).
    public var postgresBinding: PostgresBinding { PostgresBinding(typeOID: PostgresOID.unknown, text: self) }

    public init?(postgresText text: String) { self = text }
}

// MARK: - Numbers and booleans

extension Int: PostgresEncodable, PostgresDecodable {
    public var postgresBinding: PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.int8, text: String(self))
    }
    public init?(postgresText text: String) { self.init(text) }
}

extension Int64: PostgresEncodable, PostgresDecodable {
    public var postgresBinding: PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.int8, text: String(self))
    }
    public init?(postgresText text: String) { self.init(text) }
}

extension Int32: PostgresEncodable, PostgresDecodable {
    public var postgresBinding: PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.int4, text: String(self))
    }
    public init?(postgresText text: String) { self.init(text) }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    public var postgresBinding: PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.bool, text: self ? "t" : "f")
    }

    public init?(postgresText text: String) {
        switch text {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}

extension Double: PostgresEncodable, PostgresDecodable {
    public var postgresBinding: PostgresBinding {
        let text: String
        if isNaN {
            text = "NaN"
        } else if isInfinite {
            text = self < 0 ? "-Infinity" : "Infinity"
        } else {
            text = description  // shortest text that reads back to the same Double
        }
        return PostgresBinding(typeOID: PostgresOID.float8, text: text)
    }

    public init?(postgresText text: String) { self.init(text) }
}

// MARK: - Binary, UUID, time

extension Data: PostgresEncodable, PostgresDecodable {
    public var postgresBinding: PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.bytea, text: PostgresTextFormat.byteaHex(self))
    }

    public init?(postgresText text: String) {
        guard let bytes = PostgresTextFormat.bytes(fromBytea: text) else { return nil }
        self = Data(bytes)
    }
}

extension UUID: PostgresEncodable, PostgresDecodable {
    public var postgresBinding: PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.uuid, text: PostgresTextFormat.uuid(self))
    }

    public init?(postgresText text: String) {
        guard let id = PostgresTextFormat.uuid(fromText: text) else { return nil }
        self = id
    }

    /// The lowercase text form (PostgreSQL's output form), written byte by byte.
    public var lowercasedText: String { PostgresTextFormat.uuid(self) }
}

extension Date: PostgresEncodable, PostgresDecodable {
    /// Sent as timestamptz in UTC with microseconds, PostgreSQL's own precision.
    public var postgresBinding: PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.timestamptz, text: PostgresTextFormat.timestamp(self))
    }

    /// Reads timestamptz, timestamp (taken as UTC) and date (midnight UTC) in ISO style.
    public init?(postgresText text: String) {
        guard let date = PostgresTextFormat.date(fromTimestamp: text) else { return nil }
        self = date
    }
}

// MARK: - Arrays

/// An element type whose arrays map to one PostgreSQL type: `[UInt8]` is bytea, `[String]` is
/// text[], `[Int]` is int8[], `[UUID]` is uuid[].
public protocol PostgresArrayElement: Sendable {
    static func postgresBinding(forArray elements: [Self]) -> PostgresBinding
    static func postgresArray(fromText text: String) -> [Self]?
}

extension Array: PostgresEncodable where Element: PostgresArrayElement {
    public var postgresBinding: PostgresBinding { Element.postgresBinding(forArray: self) }
}

extension Array: PostgresDecodable where Element: PostgresArrayElement {
    public init?(postgresText text: String) {
        guard let elements = Element.postgresArray(fromText: text) else { return nil }
        self = elements
    }
}

extension UInt8: PostgresArrayElement {
    public static func postgresBinding(forArray elements: [UInt8]) -> PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.bytea, text: PostgresTextFormat.byteaHex(elements))
    }

    public static func postgresArray(fromText text: String) -> [UInt8]? {
        PostgresTextFormat.bytes(fromBytea: text)
    }
}

extension String: PostgresArrayElement {
    public static func postgresBinding(forArray elements: [String]) -> PostgresBinding {
        PostgresBinding(typeOID: PostgresOID.textArray, text: PostgresTextFormat.arrayLiteral(elements))
    }

    /// Fails on NULL elements and on multi-dimensional arrays.
    public static func postgresArray(fromText text: String) -> [String]? {
        guard let elements = PostgresTextFormat.arrayElements(text) else { return nil }
        var result: [String] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard let element else { return nil }
            result.append(element)
        }
        return result
    }
}

extension Int: PostgresArrayElement {
    public static func postgresBinding(forArray elements: [Int]) -> PostgresBinding {
        PostgresBinding(
            typeOID: PostgresOID.int8Array,
            text: "{" + elements.map(String.init).joined(separator: ",") + "}")
    }

    public static func postgresArray(fromText text: String) -> [Int]? {
        guard let strings = String.postgresArray(fromText: text) else { return nil }
        var result: [Int] = []
        result.reserveCapacity(strings.count)
        for string in strings {
            guard let value = Int(string) else { return nil }
            result.append(value)
        }
        return result
    }
}

extension UUID: PostgresArrayElement {
    public static func postgresBinding(forArray elements: [UUID]) -> PostgresBinding {
        PostgresBinding(
            typeOID: PostgresOID.uuidArray,
            text: "{" + elements.map(PostgresTextFormat.uuid).joined(separator: ",") + "}")
    }

    public static func postgresArray(fromText text: String) -> [UUID]? {
        guard let strings = String.postgresArray(fromText: text) else { return nil }
        var result: [UUID] = []
        result.reserveCapacity(strings.count)
        for string in strings {
            guard let value = PostgresTextFormat.uuid(fromText: string) else { return nil }
            result.append(value)
        }
        return result
    }
}
