/// Bytes received on a connection and not yet consumed by the parser. Offsets the parser
/// keeps are relative to `start`, so compaction between reads never invalidates them.
struct InputBuffer {
    var bytes: [UInt8] = []
    var start = 0

    var count: Int { bytes.count - start }

    mutating func consume(_ n: Int) {
        start += n
        if start >= bytes.count {
            bytes.removeAll(keepingCapacity: true)
            start = 0
        }
    }

    /// Drops consumed bytes when they make up most of the buffer.
    mutating func compact() {
        if start > 0 && start * 2 >= bytes.count {
            bytes.removeSubrange(0..<start)
            start = 0
        }
    }
}

/// The request line and headers of a request whose body is still being read.
struct ParsedHead {
    var method: HTTPMethod
    var target: String
    var minorVersion: Int
    var headers: HTTPFields
    var keepAlive: Bool
}

struct ParsedRequest {
    var head: ParsedHead
    var body: [UInt8]
}

/// Why the bytes on a connection cannot be a request; each maps to the status sent before closing.
enum ParseError: Error, Equatable {
    case badRequest(String)
    case headersTooLarge
    case payloadTooLarge
    case notImplemented(String)

    var status: HTTPStatus {
        switch self {
        case .badRequest: .badRequest
        case .headersTooLarge: .requestHeaderFieldsTooLarge
        case .payloadTooLarge: .payloadTooLarge
        case .notImplemented: .notImplemented
        }
    }

    var reason: String {
        switch self {
        case .badRequest(let reason): reason
        case .headersTooLarge: "headersTooLarge"
        case .payloadTooLarge: "payloadTooLarge"
        case .notImplemented(let reason): reason
        }
    }
}

/// An incremental HTTP/1.1 request parser (RFC 9112). It is fed whatever bytes have arrived
/// and returns a request only once the head and the whole body are in; every buffer it
/// grows is bounded by the configured limits. Lines must end in CRLF: a bare LF is refused.
struct RequestParser {
    enum Phase { case idle, head, body }

    private enum State {
        case head
        case fixedBody(Int)
        case chunkSize
        case chunkData(Int)
        case chunkDataEnd
        case trailers
    }

    let maxHeaderBytes: Int
    let maxBodyBytes: Int
    private static let maxChunkLineBytes = 4096

    private var state = State.head
    private var scanOffset = 0
    private var lineStart = 0
    private var head: ParsedHead?
    private var body: [UInt8] = []
    private var trailerBytes = 0
    /// Set when a head with `Expect: 100-continue` was parsed and its body is still to come.
    var continueRequested = false

    init(maxHeaderBytes: Int, maxBodyBytes: Int) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Which timeout applies while waiting for more bytes.
    func phase(bufferedBytes: Int) -> Phase {
        if case .head = state { return bufferedBytes == 0 ? .idle : .head }
        return .body
    }

    /// Consumes bytes from `input`; returns a request once one is complete, nil when more
    /// bytes are needed.
    mutating func parse(_ input: inout InputBuffer) throws(ParseError) -> ParsedRequest? {
        while true {
            switch state {
            case .head:
                if scanOffset == 0 { skipLeadingEmptyLines(&input) }
                guard let scanned = try scanHead(input) else { return nil }
                if scanned < 0 {
                    input.consume(-scanned)
                    continue
                }
                let headLength = scanned
                let parsed = try input.bytes.withUnsafeBufferPointer { all throws(ParseError) in
                    try parseHead(
                        UnsafeBufferPointer(rebasing: all[input.start..<(input.start + headLength)]))
                }
                input.consume(headLength)
                scanOffset = 0
                lineStart = 0
                head = parsed.head
                switch parsed.body {
                case .none: return finish()
                case .fixed(let length): state = .fixedBody(length)
                case .chunked: state = .chunkSize
                }
                continueRequested = parsed.expectsContinue

            case .fixedBody(let length):
                guard input.count >= length else { return nil }
                body = Array(input.bytes[input.start..<(input.start + length)])
                input.consume(length)
                return finish()

            case .chunkSize:
                guard let lineLength = try lineLength(input, limit: RequestParser.maxChunkLineBytes) else {
                    return nil
                }
                let size = try input.bytes.withUnsafeBufferPointer { all throws(ParseError) in
                    try RequestParser.chunkSize(
                        UnsafeBufferPointer(rebasing: all[input.start..<(input.start + lineLength - 2)]))
                }
                input.consume(lineLength)
                if size == 0 {
                    state = .trailers
                    trailerBytes = 0
                } else {
                    guard size <= maxBodyBytes - body.count else { throw .payloadTooLarge }
                    state = .chunkData(size)
                }

            case .chunkData(let remaining):
                guard input.count > 0 else { return nil }
                let n = min(remaining, input.count)
                body.append(contentsOf: input.bytes[input.start..<(input.start + n)])
                input.consume(n)
                if n == remaining {
                    state = .chunkDataEnd
                } else {
                    state = .chunkData(remaining - n)
                    return nil
                }

            case .chunkDataEnd:
                guard input.count >= 2 else { return nil }
                guard input.bytes[input.start] == 13, input.bytes[input.start + 1] == 10 else {
                    throw .badRequest("chunkDataNotTerminated")
                }
                input.consume(2)
                state = .chunkSize

            case .trailers:
                guard let length = try lineLength(input, limit: maxHeaderBytes - trailerBytes) else {
                    if trailerBytes + input.count > maxHeaderBytes { throw .headersTooLarge }
                    return nil
                }
                trailerBytes += length
                input.consume(length)
                if length == 2 { return finish() }
            }
        }
    }

    private mutating func finish() -> ParsedRequest? {
        defer {
            state = .head
            head = nil
            body = []
            continueRequested = false
        }
        guard let head else { return nil }
        return ParsedRequest(head: head, body: body)
    }

    /// RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
    private func skipLeadingEmptyLines(_ input: inout InputBuffer) {
        while input.count >= 2, input.bytes[input.start] == 13, input.bytes[input.start + 1] == 10 {
            input.consume(2)
        }
    }

    /// Finds the end of the head (the empty line). Returns its length including the final
    /// CRLF, nil when more bytes are needed, or minus the length of a leading empty line to skip.
    private mutating func scanHead(_ input: InputBuffer) throws(ParseError) -> Int? {
        let base = input.start
        // Bytes past the limit are never looked at, so how the head arrived (one read or
        // many) cannot change the verdict: a head over the limit is always 431.
        let end = min(input.bytes.count, base + maxHeaderBytes)
        var i = base + scanOffset
        var currentLineStart = base + lineStart
        let found: Int? = try input.bytes.withUnsafeBufferPointer { bytes throws(ParseError) -> Int? in
            while i < end {
                if bytes[i] == 10 {
                    guard i > currentLineStart, bytes[i - 1] == 13 else { throw .badRequest("bareLineFeed") }
                    if i - 1 == currentLineStart {
                        // An empty line before the request line (split across reads) is skipped.
                        return currentLineStart == base ? -(i + 1 - base) : i + 1 - base
                    }
                    currentLineStart = i + 1
                }
                i += 1
            }
            return nil
        }
        if let found {
            guard found <= maxHeaderBytes else { throw .headersTooLarge }
            scanOffset = 0
            lineStart = 0
            return found
        }
        scanOffset = i - base
        lineStart = currentLineStart - base
        guard input.count <= maxHeaderBytes else { throw .headersTooLarge }
        return nil
    }

    /// Length (including CRLF) of the next line, nil when incomplete.
    private func lineLength(_ input: InputBuffer, limit: Int) throws(ParseError) -> Int? {
        let available = input.count
        return try input.bytes.withUnsafeBufferPointer { bytes throws(ParseError) -> Int? in
            var i = input.start
            let end = input.start + min(available, max(limit, 0))
            while i < end {
                if bytes[i] == 10 {
                    guard i > input.start, bytes[i - 1] == 13 else { throw .badRequest("bareLineFeed") }
                    return i + 1 - input.start
                }
                i += 1
            }
            if available >= limit {
                if limit == RequestParser.maxChunkLineBytes { throw .badRequest("chunkLineTooLong") }
                throw .headersTooLarge
            }
            return nil
        }
    }

    private static func chunkSize(_ line: UnsafeBufferPointer<UInt8>) throws(ParseError) -> Int {
        var size = 0
        var i = 0
        while i < line.count, let digit = PercentDecoding.hexValue(line[i]) {
            guard i < 15 else { throw .badRequest("chunkSizeTooLong") }
            size = size << 4 | Int(digit)
            i += 1
        }
        guard i > 0 else { throw .badRequest("badChunkSize") }
        while i < line.count, line[i] == 32 || line[i] == 9 { i += 1 }
        if i < line.count {
            guard line[i] == UInt8(ascii: ";") else { throw .badRequest("badChunkSize") }
            for byte in line[i...] where byte < 32 && byte != 9 || byte == 127 {
                throw .badRequest("badChunkExtension")
            }
        }
        return size
    }

    private enum BodyKind { case none, fixed(Int), chunked }

    private func parseHead(_ bytes: UnsafeBufferPointer<UInt8>) throws(ParseError) -> (
        head: ParsedHead, body: BodyKind, expectsContinue: Bool
    ) {
        // Lines, without their CRLF; the last one is the empty line.
        var lines: [Range<Int>] = []
        lines.reserveCapacity(16)
        var lineBegin = 0
        for i in 0..<bytes.count where bytes[i] == 10 {
            lines.append(lineBegin..<(i - 1))
            lineBegin = i + 1
        }
        guard let requestLine = lines.first else { throw .badRequest("missingRequestLine") }
        let (method, target, minorVersion) = try parseRequestLine(
            UnsafeBufferPointer(rebasing: bytes[requestLine]))

        var headers = HTTPFields()
        headers.reserveCapacity(lines.count)
        for range in lines.dropFirst().dropLast() {
            headers.appendField(try parseField(UnsafeBufferPointer(rebasing: bytes[range])))
        }

        // RFC 9112 §3.2: exactly one Host in HTTP/1.1.
        if minorVersion >= 1 && headers.count(named: "Host") != 1 {
            throw .badRequest("missingOrRepeatedHost")
        }

        let keepAlive =
            minorVersion >= 1
            ? !headers.containsToken("Connection", "close") : headers.containsToken("Connection", "keep-alive")

        var body = BodyKind.none
        let transferEncoding = headers.values("Transfer-Encoding")
        let contentLength = headers.values("Content-Length")
        if !transferEncoding.isEmpty {
            guard contentLength.isEmpty else { throw .badRequest("transferEncodingWithContentLength") }
            guard minorVersion >= 1 else { throw .badRequest("transferEncodingInHTTP10") }
            let codings = headerTokens(transferEncoding)
            guard codings.last == "chunked" else { throw .badRequest("chunkedNotFinal") }
            guard codings.count == 1 else { throw .notImplemented("unsupportedTransferCoding") }
            body = .chunked
        } else if contentLength.count > 1 {
            throw .badRequest("multipleContentLength")
        } else if let value = contentLength.first {
            guard !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                let length = Int(value)
            else { throw .badRequest("badContentLength") }
            guard length <= maxBodyBytes else { throw .payloadTooLarge }
            if length > 0 { body = .fixed(length) }
        }

        var expectsContinue = false
        if case .none = body {
        } else if minorVersion >= 1, let expect = headers["Expect"] {
            expectsContinue = expect.lowercased() == "100-continue"
        }
        let head = ParsedHead(
            method: method, target: target, minorVersion: minorVersion, headers: headers, keepAlive: keepAlive
        )
        return (head, body, expectsContinue)
    }

    private func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(ParseError) -> (
        HTTPMethod, String, Int
    ) {
        guard let firstSpace = line.firstIndex(of: 32) else { throw .badRequest("badRequestLine") }
        guard let secondSpace = line[(firstSpace + 1)...].firstIndex(of: 32) else {
            throw .badRequest("badRequestLine")
        }
        let methodBytes = UnsafeBufferPointer(rebasing: line[0..<firstSpace])
        let targetBytes = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)..<secondSpace])
        let versionBytes = UnsafeBufferPointer(rebasing: line[(secondSpace + 1)...])

        guard !methodBytes.isEmpty, methodBytes.allSatisfy(RequestParser.isTokenByte) else {
            throw .badRequest("badMethod")
        }
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw .badRequest("badTarget")
        }
        // "HTTP/1.x"
        guard versionBytes.count == 8, versionBytes.starts(with: "HTTP/1.".utf8),
            versionBytes[7] >= 48, versionBytes[7] <= 57
        else { throw .badRequest("unsupportedVersion") }
        let minorVersion = Int(versionBytes[7] - 48)

        let method =
            methodBytes.elementsEqual("GET".utf8)
            ? HTTPMethod.get : HTTPMethod(rawValue: String(decoding: methodBytes, as: UTF8.self))
        let target = String(decoding: targetBytes, as: UTF8.self)
        let first = targetBytes[0]
        let isOriginForm = first == UInt8(ascii: "/")
        let isAbsoluteForm = target.hasPrefix("http://") || target.hasPrefix("https://")
        let isAsterisk = target == "*" && method == .options
        guard isOriginForm || isAbsoluteForm || isAsterisk else { throw .badRequest("badTarget") }
        return (method, target, minorVersion)
    }

    private func parseField(_ line: UnsafeBufferPointer<UInt8>) throws(ParseError) -> HTTPField {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            throw .badRequest("badHeader")
        }
        let name = UnsafeBufferPointer(rebasing: line[0..<colon])
        guard name.allSatisfy(RequestParser.isTokenByte) else { throw .badRequest("badHeaderName") }
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd, line[valueStart] == 32 || line[valueStart] == 9 { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == 32 || line[valueEnd - 1] == 9 { valueEnd -= 1 }
        let value = UnsafeBufferPointer(rebasing: line[valueStart..<valueEnd])
        for byte in value where (byte < 32 && byte != 9) || byte == 127 {
            throw .badRequest("badHeaderValue")
        }
        return HTTPField(
            name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
    }

    /// tchar (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
