import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 answer: status, headers (names lowercased) and the body.
struct HTTPReply {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

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
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body
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
            let n = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw HTTPClientError.closed }
            sent += n
        }
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = Self.find([13, 10, 13, 10], in: buffer)
            if headerEnd == nil { try fill() }
        }
        guard let end = headerEnd, let text = String(bytes: buffer[..<end], encoding: .utf8) else {
            throw HTTPClientError.malformed
        }
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw HTTPClientError.malformed }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let length = Int(headers.first { $0.name == "content-length" }?.value ?? "0") ?? 0
        let bodyStart = end + 4
        while buffer.count < bodyStart + length { try fill() }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeFirst(bodyStart + length)
        let reply = HTTPReply(status: status, headers: headers, body: body)
        if reply.header("connection")?.lowercased() == "close" { disconnect() }
        return reply
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let n = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw HTTPClientError.closed }
        buffer.append(contentsOf: chunk[..<n])
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] && Array(haystack[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }
}
