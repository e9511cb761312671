/// One header field as it appeared on the wire (name case preserved).
public struct HTTPField: Hashable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Header fields in their original order. Names compare case-insensitively and repeated
/// names are kept, because `Set-Cookie` and friends must not be folded together.
public struct HTTPFields: Sendable, Sequence, ExpressibleByDictionaryLiteral, Equatable {
    private var fields: [HTTPField]

    public init() { fields = [] }

    public init(_ fields: [HTTPField]) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = []
        // Room for the headers middleware typically adds, so they do not reallocate.
        fields.reserveCapacity(Swift.max(elements.count, 8))
        for (name, value) in elements { fields.append(HTTPField(name: name, value: value)) }
    }

    /// The first value for `name`, or nil.
    public subscript(name: String) -> String? {
        for field in fields where asciiCaseInsensitiveEquals(field.name, name) { return field.value }
        return nil
    }

    /// Whether some field named `name` contains `token` in its comma-separated list
    /// (case-insensitively), without building intermediate arrays.
    func containsToken(_ name: String, _ token: String) -> Bool {
        for field in fields where asciiCaseInsensitiveEquals(field.name, name) {
            for part in field.value.split(separator: ",") where asciiCaseInsensitiveEquals(part.trimmingHTTPWhitespace(), token) {
                return true
            }
        }
        return false
    }

    /// How many fields are named `name`.
    func count(named name: String) -> Int {
        var count = 0
        for field in fields where asciiCaseInsensitiveEquals(field.name, name) { count += 1 }
        return count
    }

    /// Every value for `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { asciiCaseInsensitiveEquals($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public mutating func append(_ name: String, _ value: String) {
        fields.append(HTTPField(name: name, value: value))
    }

    /// Replaces every field named `name` with a single one.
    public mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { asciiCaseInsensitiveEquals($0.name, name) }) {
            fields[index].value = value
            var next = index + 1
            while next < fields.count {
                if asciiCaseInsensitiveEquals(fields[next].name, name) {
                    fields.remove(at: next)
                } else {
                    next += 1
                }
            }
        } else {
            append(name, value)
        }
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { asciiCaseInsensitiveEquals($0.name, name) }
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[HTTPField]> { fields.makeIterator() }

    mutating func reserveCapacity(_ n: Int) { fields.reserveCapacity(n) }
    mutating func appendField(_ field: HTTPField) { fields.append(field) }
}

@inline(__always)
func asciiLower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

func asciiCaseInsensitiveEquals(_ lhs: String, _ rhs: String) -> Bool {
    let a = lhs.utf8
    let b = rhs.utf8
    guard a.count == b.count else { return false }
    // Native strings are contiguous UTF-8: compare the buffers directly.
    let fast = a.withContiguousStorageIfAvailable { x in
        b.withContiguousStorageIfAvailable { y -> Bool in
            for index in 0..<x.count where asciiLower(x[index]) != asciiLower(y[index]) { return false }
            return true
        }
    }
    if let fast, let result = fast { return result }
    var ib = b.makeIterator()
    for x in a {
        guard let y = ib.next(), asciiLower(x) == asciiLower(y) else { return false }
    }
    return true
}

/// Comma-separated tokens of a header value, trimmed and lowercased (`Connection`, `Transfer-Encoding`).
func headerTokens(_ values: [String]) -> [String] {
    values.flatMap { $0.split(separator: ",") }.map { $0.trimmingHTTPWhitespace().lowercased() }
        .filter { !$0.isEmpty }
}

extension StringProtocol {
    func trimmingHTTPWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
