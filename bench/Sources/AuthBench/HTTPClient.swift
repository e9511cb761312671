import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 answer: status, headers (names lowercased) and the body.
struct HTTPReply {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// `monotonicSeconds()` when its last byte arrived, before it was parsed: latencies end here,
    /// so the load generator's own parsing is not counted as the server's time.
    var receivedAt: Double = 0

    func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }

    /// `name=value` of the first `Set-Cookie` whose name is `cookie`.
    func cookie(_ cookie: String) -> String? {
        for (name, value) in headers where name == "set-cookie" {
            let pair = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            if pair.hasPrefix(cookie + "=") { return pair }
        }
        return nil
    }

    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
}

enum HTTPClientError: Error { case connect(Int32), closed, malformed }

/// A blocking keep-alive connection to 127.0.0.1; one per load-generator thread. It
/// reconnects once when the server closed the connection between two requests.
final class HTTPConnection {
    let port: UInt16
    private var descriptor: Int32 = -1
    private var buffer: [UInt8] = []

    init(port: UInt16) { self.port = port }
    deinit { if descriptor >= 0 { close(descriptor) } }

    private func connect() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPClientError.connect(errno) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw HTTPClientError.connect(code)
        }
        descriptor = fd
        buffer.removeAll(keepingCapacity: true)
    }

    private func disconnect() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> HTTPReply {
        try send(Self.encode(method, path, port: port, headers: headers, body: body))
    }

    /// The bytes of a request, to build once and send many times.
    static func encode(
        _ method: String, _ path: String, port: UInt16, headers: [(String, String)] = [], body: [UInt8] = []
    ) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// Sends the bytes of one request (from `encode`) and reads its reply.
    func send(_ bytes: [UInt8]) throws -> HTTPReply {
        let reused = descriptor >= 0
        do {
            return try exchange(bytes)
        } catch HTTPClientError.closed where reused {
            disconnect()
            return try exchange(bytes)
        } catch {
            disconnect()
            throw error
        }
    }

    private func exchange(_ bytes: [UInt8]) throws -> HTTPReply {
        if descriptor < 0 { try connect() }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw HTTPClientError.closed }
            sent += n
        }
        var headerEnd: Int?
        var searched = 0
        while headerEnd == nil {
            headerEnd = Self.find([13, 10, 13, 10], in: buffer, from: searched)
            if headerEnd == nil {
                searched = max(0, buffer.count - 3)
                try fill()
            }
        }
        guard let end = headerEnd else { throw HTTPClientError.malformed }
        let length = Self.contentLength(buffer[..<end])
        let bodyStart = end + 4
        while buffer.count < bodyStart + length { try fill() }
        let receivedAt = monotonicSeconds()
        let (status, headers) = try Self.parseHead(buffer[..<end])
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        let reply = HTTPReply(status: status, headers: headers, body: body, receivedAt: receivedAt)
        if reply.header("connection")?.lowercased() == "close" { disconnect() }
        return reply
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let n = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw HTTPClientError.closed }
        buffer.append(contentsOf: chunk[..<n])
    }

    /// The `Content-Length` value (0 without one), read from the bytes of the head.
    private static func contentLength(_ head: ArraySlice<UInt8>) -> Int {
        let name = Array("\r\ncontent-length:".utf8)
        var index = head.startIndex
        while index + name.count <= head.endIndex {
            var matches = true
            for offset in 0..<name.count where lowercased(head[index + offset]) != name[offset] {
                matches = false
                break
            }
            if matches {
                var value = 0
                var position = index + name.count
                while position < head.endIndex, head[position] == 0x20 { position += 1 }
                while position < head.endIndex, (0x30...0x39).contains(head[position]) {
                    value = value * 10 + Int(head[position] - 0x30)
                    position += 1
                }
                return value
            }
            index += 1
        }
        return 0
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }

    /// Status and headers (names lowercased, values without surrounding spaces).
    private static func parseHead(_ head: ArraySlice<UInt8>) throws -> (Int, [(name: String, value: String)]) {
        let lines = head.split(separator: 10, omittingEmptySubsequences: true).map { line in
            line.last == 13 ? line.dropLast() : line
        }
        guard let statusLine = lines.first else { throw HTTPClientError.malformed }
        let parts = statusLine.split(separator: 0x20, maxSplits: 2)
        guard parts.count >= 2, let status = Int(String(decoding: parts[1], as: UTF8.self)) else {
            throw HTTPClientError.malformed
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            var value = line[(colon + 1)...]
            while value.first == 0x20 || value.first == 0x09 { value = value.dropFirst() }
            while value.last == 0x20 || value.last == 0x09 { value = value.dropLast() }
            headers.append(
                (String(decoding: line[..<colon].map(lowercased), as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return (status, headers)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}
