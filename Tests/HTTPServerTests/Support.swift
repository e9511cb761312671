import Foundation
import Synchronization
import Testing

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// Collects the server's log lines for assertions.
final class LogCollector: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var sink: @Sendable (String) -> Void { { [self] line in append(line) } }
}

/// Starts a server on an ephemeral loopback port with a small worker pool.
func startServer(
    _ responder: any HTTPResponder, configure: (inout HTTPServer.Configuration) -> Void = { _ in }
) throws -> (server: HTTPServer, log: LogCollector) {
    var configuration = HTTPServer.Configuration(port: 0, workerThreads: 4)
    configure(&configuration)
    let log = LogCollector()
    let server = HTTPServer(configuration: configuration, responder: responder, log: log.sink)
    try server.start()
    return (server, log)
}

struct TestError: Error {}

/// A parsed response as seen by a raw client.
struct RawResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking TCP client that can send arbitrary bytes, for exercising the parser and limits.
final class RawClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from `source` (any 127.x address is this machine too).
    init(port: Int, receiveTimeout: Double = 5, source: String? = nil) throws {
        fd = try Self.connectedSocket(port: port, source: source)
        var timeout = timeval(
            tv_sec: Int(receiveTimeout),
            tv_usec: Int((receiveTimeout.truncatingRemainder(dividingBy: 1)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A connected socket, or an error with the socket closed. Kept out of `init`: `deinit`
    /// runs for an initialised instance whose `init` throws, and a second close of the same
    /// number would close whatever another thread opened meanwhile.
    private static func connectedSocket(port: Int, source: String?) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError() }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                Glibc.close(fd)
                throw TestError()
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw TestError()
        }
        return fd
    }

    deinit { Glibc.close(fd) }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Reads more bytes; false on EOF, error or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Reads one response (Content-Length framed; no body for HEAD/204/304 when asked).
    func readResponse(expectBody: Bool = true) throws -> RawResponse {
        while true {
            if let end = findHeadEnd() {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst()
                let parts = statusLine.split(separator: " ")
                guard parts.count >= 2, let status = Int(parts[1]) else { throw TestError() }
                let headers = lines.filter { !$0.isEmpty }.map { line -> (name: String, value: String) in
                    let colon = line.firstIndex(of: ":") ?? line.endIndex
                    return (
                        String(line[..<colon]),
                        line[colon...].dropFirst().trimmingCharacters(in: .whitespaces)
                    )
                }
                let length =
                    expectBody
                    ? Int(headers.first { $0.name.lowercased() == "content-length" }?.value ?? "0") ?? 0 : 0
                let bodyStart = end + 4
                while buffer.count < bodyStart + length {
                    guard fill() else { throw TestError() }
                }
                let body = Array(buffer[bodyStart..<(bodyStart + length)])
                buffer.removeSubrange(0..<(bodyStart + length))
                return RawResponse(status: status, headers: headers, body: body)
            }
            guard fill() else { throw TestError() }
        }
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4)
        where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// Whether the server closed the connection (EOF) before the receive timeout; any
    /// buffered response bytes are discarded.
    func waitForClose() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }
}

/// One request on a fresh connection.
func fetch(_ port: Int, _ request: String) throws -> RawResponse {
    let client = try RawClient(port: port)
    client.send(request)
    return try client.readResponse(expectBody: !request.hasPrefix("HEAD "))
}

func get(_ port: Int, _ target: String, headers: String = "") throws -> RawResponse {
    try fetch(port, "GET \(target) HTTP/1.1\r\nHost: localhost\r\n\(headers)Connection: close\r\n\r\n")
}

/// Runs a command line tool and returns its standard output.
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("http-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
