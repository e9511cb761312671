import Foundation
import Postgres
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import AuthServer

/// One hostile request and what the server must answer: the exact status and, where the
/// endpoint has one, the error code (JSON `error`, the `error` of a redirect, or a marker in
/// the page).
struct HostileCase {
    var name: String
    var status: Int
    var error: String?
    var send: () throws -> TestAgent.Reply

    init(
        _ name: String, _ status: Int, _ error: String? = nil, _ send: @escaping () throws -> TestAgent.Reply
    ) {
        self.name = name
        self.status = status
        self.error = error
        self.send = send
    }
}

/// Runs tables of hostile requests against one application and checks, after each table,
/// that the process still answers and that no refused request left a record behind.
struct HostileCatalogue {
    let app: TestApplication

    /// Tables whose row counts a refused request must not change.
    static let countedTables = [
        "accounts", "account_emails", "password_credentials", "passkey_credentials",
        "authentication_sessions",
        "authorization_codes", "refresh_tokens", "refresh_token_families", "access_tokens", "consents",
        "session_clients",
    ]

    func counts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in Self.countedTables {
            let rows = try app.sql(PostgresQuery(unsafeSQL: "SELECT count(*)::int AS n FROM \(table)"))
            counts[table] = try rows.first?.decode("n", as: Int.self) ?? -1
        }
        return counts
    }

    /// The error code a reply carries, wherever the endpoint puts it.
    static func errorCode(of reply: TestAgent.Reply) -> String? {
        if let error = reply.error { return error }
        if let location = reply.header("Location"), let items = URLComponents(string: location)?.queryItems {
            return items.first { $0.name == "error" }?.value
        }
        return nil
    }

    /// Sends every case; returns how many ran.
    @discardableResult
    func run(_ cases: [HostileCase], sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let before = try counts()
        for item in cases {
            let reply: TestAgent.Reply
            do {
                reply = try item.send()
            } catch {
                Issue.record("\(item.name): no HTTP answer (\(error))", sourceLocation: sourceLocation)
                continue
            }
            #expect(
                reply.status == item.status,
                "\(item.name): expected \(item.status), got \(reply.status) \(reply.text.prefix(300))",
                sourceLocation: sourceLocation)
            // 501 is the one 5xx a case may expect: a transfer coding the server does not implement.
            #expect(
                reply.status < 500 || (reply.status == 501 && item.status == 501),
                "\(item.name): server error",
                sourceLocation: sourceLocation)
            if let error = item.error {
                let code = Self.errorCode(of: reply)
                let inPage = code == nil && reply.text.contains(error)
                #expect(
                    code == error || inPage,
                    "\(item.name): expected error \(error), got \(code ?? "none") \(reply.text.prefix(200))",
                    sourceLocation: sourceLocation)
            }
        }
        let health = try app.client.get("/healthz")
        #expect(
            health.status == 200, "the server still answers after the batch", sourceLocation: sourceLocation)
        #expect(try counts() == before, "refused requests leave no records", sourceLocation: sourceLocation)
        return cases.count
    }

    // MARK: - Request helpers

    /// Raw bytes over TCP; the reply is whatever the server wrote before closing.
    func raw(_ text: String) throws -> TestAgent.Reply { try raw(Array(text.utf8)) }

    func raw(_ bytes: [UInt8]) throws -> TestAgent.Reply {
        TestAgent.Reply(response: try TestHTTPClient.parse(Self.exchange(port: app.server.port, bytes)))
    }

    /// Sends raw bytes and reads one response: until its Content-Length is in, or the server
    /// closes. (Reading to the close would wait out the lingering close after every refusal.)
    static func exchange(port: Int, _ bytes: [UInt8]) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPClient.Failure.connect(errno) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw TestHTTPClient.Failure.connect(errno) }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            // The server may refuse (413, 431) and stop reading before the whole request is sent.
            guard sent > 0 else { break }
            offset += sent
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !isComplete(received) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }

    private static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else { return false }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
        guard
            let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return bytes.count - end.upperBound >= length
    }

    func get(_ target: String, headers: [(String, String)] = []) throws -> TestAgent.Reply {
        TestAgent.Reply(response: try app.client.get(target, headers: headers))
    }

    /// A form POST whose body is sent exactly as given (already encoded, or deliberately not).
    func postBody(
        _ target: String, _ body: [UInt8], contentType: String = "application/x-www-form-urlencoded",
        headers: [(String, String)] = []
    ) throws -> TestAgent.Reply {
        TestAgent.Reply(
            response: try app.client.send(
                method: "POST", target: target, headers: [("Content-Type", contentType)] + headers, body: body
            ))
    }

    func postForm(_ target: String, _ form: [(String, String)], headers: [(String, String)] = []) throws
        -> TestAgent.Reply
    {
        TestAgent.Reply(response: try app.client.post(target, form: form, headers: headers))
    }
}
