/// Percent-decoding for request targets and form bodies.
enum PercentDecoding {
    /// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`). Returns nil for a
    /// truncated or non-hex escape or for bytes that are not valid UTF-8.
    static func decode<C: Collection>(_ bytes: C, plusAsSpace: Bool) -> String? where C.Element == UInt8 {
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(validating: bytes, as: UTF8.self)
        }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let first = bytes.index(after: index)
                guard first != bytes.endIndex else { return nil }
                let second = bytes.index(after: first)
                guard second != bytes.endIndex, let high = hexValue(bytes[first]),
                    let low = hexValue(bytes[second])
                else { return nil }
                out.append(high << 4 | low)
                index = bytes.index(after: second)
                continue
            }
            out.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index = bytes.index(after: index)
        }
        return String(validating: out, as: UTF8.self)
    }

    /// Parses `application/x-www-form-urlencoded` data (also used for query strings).
    static func formItems<C: Collection>(_ bytes: C) -> [(name: String, value: String)]?
    where C.Element == UInt8, C.SubSequence: Collection<UInt8> {
        var items: [(name: String, value: String)] = []
        for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let name: String
            let value: String
            if let eq = pair.firstIndex(of: UInt8(ascii: "=")) {
                guard let n = decode(pair[pair.startIndex..<eq], plusAsSpace: true),
                    let v = decode(pair[pair.index(after: eq)...], plusAsSpace: true)
                else { return nil }
                name = n
                value = v
            } else {
                guard let n = decode(pair, plusAsSpace: true) else { return nil }
                name = n
                value = ""
            }
            items.append((name, value))
        }
        return items
    }

    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
