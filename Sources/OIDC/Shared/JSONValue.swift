import Foundation

/// A JSON value for response bodies and token claims whose members vary (userinfo,
/// introspection, ID token claims). Encodes deterministically (sorted keys, unescaped
/// slashes) so tests can compare bytes.
public enum JSONValue: Sendable, Equatable, Codable {
    case string(String)
    case int(Int)
    /// A number that is not an integer.
    case double(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Int.self) { self = .int(value); return }
        if let value = try? container.decode(Double.self) { self = .double(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    /// Parses a JSON document (any value at the top level). Keeps `true` apart from `1` and
    /// `2` apart from `2.5`, so that readers can say which type they expected.
    public static func parse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    public var stringValue: String? { if case .string(let value) = self { return value } else { return nil } }
    public var intValue: Int? { if case .int(let value) = self { return value } else { return nil } }
    public var boolValue: Bool? { if case .bool(let value) = self { return value } else { return nil } }
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value } else { return nil }
    }
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value } else { return nil }
    }
}

/// The JSON text of bodies and token claims: keys sorted by their UTF-8 bytes, slashes not
/// escaped, `"`, `\\` and control characters escaped as Foundation's `JSONEncoder` does (with
/// `.sortedKeys, .withoutEscapingSlashes`), byte for byte. Written by hand because it runs
/// several times per token request, where `JSONEncoder` cost more than the rest of the
/// request's own work.
public enum JSONBody {
    public static func encode(_ object: [String: JSONValue]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(object, to: &out)
        return out
    }

    public static func encode(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, to: &out)
        return out
    }

    public static func encode(_ array: [JSONValue]) -> [UInt8] { encode(JSONValue.array(array)) }

    public static func encode(_ object: [String: String]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96)
        out.append(UInt8(ascii: "{"))
        for (index, key) in sortedKeys(object).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            write(key, to: &out)
            out.append(UInt8(ascii: ":"))
            write(object[key] ?? "", to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The same text laid out for people (command-line `--json` output): members on their own
    /// lines, two spaces per level, `"key" : value` as Foundation's `.prettyPrinted` writes it;
    /// empty arrays and objects stay `[]` and `{}`.
    public static func encodePretty(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        writePretty(value, level: 0, to: &out)
        return out
    }

    private static func writePretty(_ value: JSONValue, level: Int, to out: inout [UInt8]) {
        switch value {
        case .object(let object) where !object.isEmpty:
            out.append(UInt8(ascii: "{"))
            for (index, key) in sortedKeys(object).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                newline(level: level + 1, to: &out)
                write(key, to: &out)
                out.append(contentsOf: " : ".utf8)
                writePretty(object[key] ?? .null, level: level + 1, to: &out)
            }
            newline(level: level, to: &out)
            out.append(UInt8(ascii: "}"))
        case .array(let array) where !array.isEmpty:
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                newline(level: level + 1, to: &out)
                writePretty(element, level: level + 1, to: &out)
            }
            newline(level: level, to: &out)
            out.append(UInt8(ascii: "]"))
        default:
            write(value, to: &out)
        }
    }

    private static func newline(level: Int, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    private static func sortedKeys<Value>(_ object: [String: Value]) -> [String] {
        object.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    private static func write(_ object: [String: JSONValue], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (index, key) in sortedKeys(object).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            write(key, to: &out)
            out.append(UInt8(ascii: ":"))
            write(object[key] ?? .null, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .string(let string): write(string, to: &out)
        case .int(let int): out.append(contentsOf: String(int).utf8)
        case .double(let double): write(double, to: &out)
        case .bool(let bool): out.append(contentsOf: (bool ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        case .object(let object): write(object, to: &out)
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
    }

    /// Integral values print without a fraction (`2`, as `JSONEncoder` does); others in Swift's
    /// shortest round-tripping form. JSON has no NaN or infinity: those become `null`.
    private static func write(_ double: Double, to out: inout [UInt8]) {
        guard double.isFinite else { out.append(contentsOf: "null".utf8); return }
        var text = double.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        out.append(contentsOf: text.utf8)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func write(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
