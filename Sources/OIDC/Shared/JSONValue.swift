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

enum JSONBody {
    /// Sorted keys, unescaped slashes. Encoding these values cannot fail.
    static func encode(_ object: [String: JSONValue]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(object))) ?? Array("{}".utf8)
    }
}
