/// Turns an `HTTPResponse` into wire bytes, adding the framing headers the server owns.
enum ResponseSerializer {
    /// Headers the server computes itself; a handler's own values for them are ignored.
    private static func isServerOwned(_ name: String) -> Bool {
        // Length first: most names cannot match any of these.
        switch name.utf8.count {
        case 4, 10, 12, 14, 17: break
        default: return false
        }
        return asciiCaseInsensitiveEquals(name, "Content-Length")
            || asciiCaseInsensitiveEquals(name, "Transfer-Encoding")
            || asciiCaseInsensitiveEquals(name, "Connection") || asciiCaseInsensitiveEquals(name, "Date")
            || asciiCaseInsensitiveEquals(name, "X-Request-ID")
    }

    static func serialize(
        _ response: HTTPResponse, requestID: String?, keepAlive: Bool, minorVersion: Int, omitBody: Bool,
        date: [UInt8]
    ) -> [UInt8] {
        let forbidsBody = response.status.forbidsBody
        let writesBody = !omitBody && !forbidsBody
        var out = [UInt8]()
        out.reserveCapacity(256 + (writesBody ? response.body.count : 0))
        out.appendLiteral("HTTP/1.1 ")
        appendDecimal(response.status.code, to: &out)
        out.append(32)
        appendSanitized(response.status.reasonPhrase, to: &out)
        out.appendLiteral("\r\nDate: ")
        out.append(contentsOf: date)
        if !forbidsBody {
            out.appendLiteral("\r\nContent-Length: ")
            appendDecimal(response.body.count, to: &out)
        }
        if let requestID {
            out.appendLiteral("\r\nX-Request-ID: ")
            appendSanitized(requestID, to: &out)
        }
        if !keepAlive {
            out.appendLiteral("\r\nConnection: close")
        } else if minorVersion == 0 {
            out.appendLiteral("\r\nConnection: keep-alive")
        }
        for field in response.headers where !isServerOwned(field.name) {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(RequestParser.isTokenByte) else { continue }
            out.append(13)
            out.append(10)
            out.appendUTF8(field.name)
            out.append(58)
            out.append(32)
            appendSanitized(field.value, to: &out)
        }
        out.appendLiteral("\r\n\r\n")
        if writesBody { out.append(contentsOf: response.body) }
        return out
    }

    /// Response splitting guard: CR, LF and NUL in a value become spaces.
    private static func appendSanitized(_ value: String, to out: inout [UInt8]) {
        let clean = value.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !bytes.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if clean == true { return }
        for byte in value.utf8 {
            out.append(byte == 13 || byte == 10 || byte == 0 ? 32 : byte)
        }
    }

    /// Appends a non-negative integer in decimal without creating a String.
    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        guard value > 0 else {
            out.append(48)
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[19 - count] = UInt8(48 + rest % 10)
                rest /= 10
                count += 1
            }
            out.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// Whether the handler asked for the connection to close.
    static func requestsClose(_ response: HTTPResponse) -> Bool {
        response.headers.containsToken("Connection", "close")
    }

    /// A minimal response written by the event loop itself (errors found while parsing,
    /// overload), always closing the connection.
    static func errorResponse(_ status: HTTPStatus) -> [UInt8] {
        serialize(
            .text(status.reasonPhrase, status: status), requestID: nil, keepAlive: false, minorVersion: 1,
            omitBody: false, date: HTTPDate.currentBytes())
    }
}

extension Array where Element == UInt8 {
    /// Appends a literal's bytes in one copy (appending a `String.UTF8View` goes through the
    /// generic, element-by-element path).
    @inline(__always)
    mutating func appendLiteral(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }

    /// Appends a string's UTF-8 bytes, in one copy when the string is stored contiguously.
    @inline(__always)
    mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
}
