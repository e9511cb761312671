/// The `htu` comparison of RFC 9449 §4.3 step 9: the request's URI without query and
/// fragment, after the syntax-based and scheme-based normalisation of RFC 3986 §6.2.2 and
/// §6.2.3, so that `HTTPS://Server.Example:443/token` matches `https://server.example/token`.
public enum DPoPURI {
    /// The normalised form of an absolute `http`/`https` URI, or nil when it is not one
    /// (another scheme, no host, user information, a malformed percent-encoding).
    public static func normalised(_ uri: String) -> String? {
        // Query and fragment are ignored (§4.2 `htu`).
        var text = Substring(uri)
        if let end = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<end] }
        guard let schemeEnd = text.range(of: "://") else { return nil }
        // §6.2.2.1: scheme and host are case-insensitive.
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let pathStart = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<pathStart]
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host = Substring(authority)
        var port: Substring?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty, let hostText = percentNormalised(host)?.lowercased() else { return nil }
        // §6.2.3: the default port and an empty port are the same as none.
        var portText = ""
        if let port, !port.isEmpty {
            guard port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber), let number = Int(port),
                number <= 65_535
            else { return nil }
            let isDefault = (scheme == "https" && number == 443) || (scheme == "http" && number == 80)
            if !isDefault { portText = ":\(number)" }
        }
        // §6.2.3: an empty path is "/"; §6.2.2.3: dot segments removed.
        guard let path = percentNormalised(rest[pathStart...]) else { return nil }
        return scheme + "://" + hostText + portText + removingDotSegments(path.isEmpty ? "/" : path)
    }

    /// Whether a proof's `htu` names `expected` (the endpoint's URI as this server publishes it).
    public static func matches(_ htu: String, expected: String) -> Bool {
        // The usual case: the client copied the URL as published (identical strings have the
        // same normal form).
        if htu == expected, !expected.utf8.contains(UInt8(ascii: "?")),
            !expected.utf8.contains(UInt8(ascii: "#"))
        {
            return true
        }
        guard let left = normalised(htu), let right = normalised(expected) else { return false }
        return left == right
    }

    /// §6.2.2.1 and §6.2.2.2: hexadecimal digits upper case, unreserved characters decoded.
    private static func percentNormalised(_ text: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard bytes.count >= 2, let high = hex(bytes.removeFirst()), let low = hex(bytes.removeFirst())
            else {
                return nil
            }
            let value = high << 4 | low
            if FormEncoding.isUnreserved(value) {
                out.append(value)
            } else {
                out.append(contentsOf: Array(String(format2: value).utf8))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// RFC 3986 §5.2.4.
    private static func removingDotSegments(_ path: String) -> String {
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in segments.enumerated() {
            let last = index == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}

extension String {
    /// `%XX` with upper-case hexadecimal digits.
    fileprivate init(format2 value: UInt8) {
        let digits = Array("0123456789ABCDEF".utf8)
        self = "%" + String(decoding: [digits[Int(value >> 4)], digits[Int(value & 0x0F)]], as: UTF8.self)
    }
}
