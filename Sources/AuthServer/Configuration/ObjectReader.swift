import OIDC

/// Reads the members of one JSON object, recording a problem (with its JSON path) for every
/// missing, mistyped or unknown member instead of stopping at the first.
final class ObjectReader {
    let path: String
    private let members: [String: JSONValue]
    private var consumed: Set<String> = []
    let sink: ProblemSink

    init?(_ value: JSONValue, path: String, sink: ProblemSink) {
        guard case .object(let members) = value else {
            sink.error(path, "must be an object, found \(value.typeName)")
            return nil
        }
        self.path = path
        self.members = members
        self.sink = sink
    }

    func memberPath(_ key: String) -> String { "\(path).\(key)" }

    func error(_ key: String, _ message: String) { sink.error(memberPath(key), message) }
    func warning(_ key: String, _ message: String) { sink.warning(memberPath(key), message) }

    func has(_ key: String) -> Bool { members[key] != nil && members[key] != .null }

    /// The raw value of a member, marking it as known.
    func value(_ key: String) -> JSONValue? {
        consumed.insert(key)
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String, required: Bool = false) -> String? {
        guard let value = value(key) else {
            if required { error(key, "is required") }
            return nil
        }
        guard case .string(let s) = value else {
            error(key, "must be a string, found \(value.typeName)")
            return nil
        }
        if s.isEmpty {
            error(key, "must not be empty")
            return nil
        }
        return s
    }

    func bool(_ key: String) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let b) = value else {
            error(key, "must be true or false, found \(value.typeName)")
            return nil
        }
        return b
    }

    func integer(_ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = value(key) else { return nil }
        guard let n = value.integerValue else {
            error(key, "must be an integer, found \(value.typeName)")
            return nil
        }
        guard range.contains(Int(n)) else {
            error(key, "must be between \(range.lowerBound) and \(range.upperBound), found \(Int(n))")
            return nil
        }
        return Int(n)
    }

    /// An array of strings; each bad element is reported with its index.
    func strings(_ key: String, required: Bool = false) -> [String]? {
        guard let value = value(key) else {
            if required { error(key, "is required") }
            return nil
        }
        guard case .array(let items) = value else {
            error(key, "must be an array of strings, found \(value.typeName)")
            return nil
        }
        var result: [String] = []
        for (index, item) in items.enumerated() {
            if case .string(let s) = item, !s.isEmpty {
                result.append(s)
            } else {
                sink.error(
                    "\(memberPath(key))[\(index)]", "must be a non-empty string, found \(item.typeName)")
            }
        }
        return result
    }

    /// Reports every member that no reader asked for: a misspelt key must not be silently ignored.
    func reportUnknownMembers() {
        for key in members.keys.sorted() where !consumed.contains(key) {
            error(key, "is not a known setting")
        }
    }
}

/// Collects problems in the order they are found.
final class ProblemSink {
    private(set) var problems: [ConfigurationProblem] = []
    func error(_ path: String, _ message: String) {
        problems.append(ConfigurationProblem(path: path, message: message, severity: .error))
    }
    func warning(_ path: String, _ message: String) {
        problems.append(ConfigurationProblem(path: path, message: message, severity: .warning))
    }
    var errors: [ConfigurationProblem] { problems.filter { $0.severity == .error } }
    var warnings: [ConfigurationProblem] { problems.filter { $0.severity == .warning } }
}

extension JSONValue {
    /// The name of this value's JSON type, for error messages.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// A whole number below 10^15 in magnitude, written with or without a fraction (`5`, `5.0`).
    var integerValue: Int? {
        switch self {
        case .int(let n) where (-999_999_999_999_999...999_999_999_999_999).contains(n): n
        case .double(let d) where d == d.rounded() && abs(d) < 1e15: Int(d)
        default: nil
        }
    }
}
