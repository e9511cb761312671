import Foundation

/// The name/value pairs of a query string or an `application/x-www-form-urlencoded` body,
/// in order and with duplicates kept, so that a duplicated parameter can be refused
/// (RFC 6749 §3.1) instead of one copy silently winning.
public struct Parameters: Sendable, Equatable {
    public let items: [(name: String, value: String)]

    public init(_ items: [(name: String, value: String)]) { self.items = items }

    /// Decodes `a=b&c=d` (`+` is a space, `%XX` a byte, the result must be UTF-8).
    /// - Throws: `invalid_request` for bad percent-encoding or invalid UTF-8.
    public init(formEncoded text: String) throws(OAuthError) {
        var items: [(name: String, value: String)] = []
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = FormEncoding.decode(parts[0]),
                let value = parts.count > 1 ? FormEncoding.decode(parts[1]) : ""
            else { throw .invalidRequest("The parameters are not correctly form-encoded.") }
            items.append((name, value))
        }
        self.items = items
    }

    /// The value of `name`. A parameter sent without a value counts as omitted (RFC 6749
    /// §3.1); sent more than once it is refused.
    /// - Throws: `invalid_request` naming the duplicated parameter.
    public func value(_ name: String) throws(OAuthError) -> String? {
        let values = items.filter { $0.name == name }
        guard values.count <= 1 else { throw .invalidRequest("The '\(name)' parameter is duplicated.") }
        guard let value = values.first?.value, !value.isEmpty else { return nil }
        return value
    }

    /// Like `value(_:)`, but absence is an error.
    public func required(_ name: String) throws(OAuthError) -> String {
        guard let value = try value(name) else {
            throw .invalidRequest("The '\(name)' parameter is missing.")
        }
        return value
    }

    /// Every value of a parameter that may repeat (RFC 8707 §2 `resource`), in order.
    public func values(_ name: String) -> [String] {
        items.filter { $0.name == name }.map(\.value)
    }

    /// Whether the parameter is present at all (even empty).
    public func contains(_ name: String) -> Bool { items.contains { $0.name == name } }

    /// Refuses the first of `names` that occurs more than once.
    public func rejectDuplicates(of names: [String]) throws(OAuthError) {
        for name in names { _ = try value(name) }
    }

    public static func == (lhs: Parameters, rhs: Parameters) -> Bool {
        lhs.items.map(\.name) == rhs.items.map(\.name) && lhs.items.map(\.value) == rhs.items.map(\.value)
    }
}

/// `application/x-www-form-urlencoded` (WHATWG URL §5), as used by query strings, form
/// bodies and HTTP Basic credentials (RFC 6749 §2.3.1).
public enum FormEncoding {
    /// Encodes everything except the unreserved characters `A-Z a-z 0-9 - . _ ~` (space
    /// becomes `%20`, which every decoder accepts).
    public static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `name=value&…`, each part encoded.
    public static func encode(_ items: [(name: String, value: String)]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(items.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            append(item.name, to: &out)
            out.append(UInt8(ascii: "="))
            append(item.value, to: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let upperHexDigits = Array("0123456789ABCDEF".utf8)

    private static func append(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(upperHexDigits[Int(byte >> 4)])
                out.append(upperHexDigits[Int(byte & 0x0F)])
            }
        }
    }

    /// Decodes `+` and `%XX`; `nil` for a bad escape or invalid UTF-8.
    public static func decode(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue),
                    let low = iterator.next().flatMap(hexValue)
                else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `A-Z a-z 0-9 - . _ ~`
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// Space-delimited lists (`scope`, `prompt`, `ui_locales`, RFC 6749 §3.3).
enum SpaceList {
    static func split(_ value: String?) -> [String] {
        (value ?? "").split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    }
}
