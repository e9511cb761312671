import Foundation
import Synchronization
import Testing

@testable import AuthServer

#if canImport(Glibc)
    import Glibc
#endif

/// A real `auth-server serve` process on a free loopback port, with its standard error in a
/// file (so a long run never blocks on a full pipe and the log can be searched afterwards).
final class ServeProcess {
    let port: Int
    let directory: URL
    let process = Process()
    var client: TestHTTPClient { TestHTTPClient(port: port) }
    var issuer: String { "http://localhost:\(port)" }
    var logFile: URL { directory.appendingPathComponent("server.log") }

    /// `extraConfig` is JSON members appended to the config object (`, "key": value`).
    init(databaseURL: String, extraConfig: String = "", environment extra: [String: String] = [:]) throws {
        port = try FreePort.next()
        directory = URL(fileURLWithPath: "/tmp/auth-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("config.json")
        let publicDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent("public").path
        try Data(
            """
            {"issuer": "http://localhost:\(port)", "listen": "127.0.0.1:\(port)",
             "public_dir": "\(publicDirectory)", "database_url": "\(databaseURL)",
             "clients": [\(Self.nativeClient)]\(extraConfig)}
            """.utf8
        ).write(to: config)
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        var environment = ProcessInfo.processInfo.environment
        environment["AUTH_SERVER_KEY_ENCRYPTION_KEY"] = TestApplication.keyEncryptionKey
        for (key, value) in extra { environment[key] = value }
        process.executableURL = Executable.url
        process.arguments = ["serve", "--config", config.path]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
        guard waitUntil(seconds: 60, { (try? self.client.get("/readyz"))?.status == 200 }) else {
            process.terminate()
            throw OAuthTestError.unexpected("server did not become ready: \(log)")
        }
    }

    static let nativeClient = """
        {"client_id": "native-app", "application_type": "native", "token_endpoint_auth_method": "none",
         "redirect_uris": ["http://127.0.0.1/callback"], "grant_types": ["authorization_code", "refresh_token"],
         "scope": "openid profile email offline_access", "first_party": true}
        """

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// SIGTERM, then the exit status (nil when it did not exit within `seconds`).
    @discardableResult
    func terminate(waitSeconds seconds: Double = 30) -> Int32? {
        if process.isRunning { process.terminate() }
        guard waitUntil(seconds: seconds, { !self.process.isRunning }) else { return nil }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

}

/// Polls `condition` every 50 ms for at most `seconds`.
func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return condition()
}

/// A browser-like client for a server on a port (no `TestApplication`): a CSRF cookie and
/// token, the session cookie, JSON calls.
final class PortAgent {
    let client: TestHTTPClient
    let origin: String
    var cookies: [String: String] = [:]
    var csrfToken: String?

    init(port: Int, origin: String) {
        client = TestHTTPClient(port: port)
        self.origin = origin
    }

    func send(_ method: String, _ path: String, json: Any? = nil) throws -> TestAgent.Reply {
        if method != "GET", csrfToken == nil {
            let reply = try send("GET", "/api/csrf")
            csrfToken = reply.json["csrf_token"] as? String
        }
        var headers: [(String, String)] = []
        if !cookies.isEmpty {
            headers.append(("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")))
        }
        if method != "GET" {
            headers.append(("Origin", origin))
            headers.append(("X-CSRF-Token", csrfToken ?? ""))
        }
        var body: [UInt8] = []
        if let json {
            headers.append(("Content-Type", "application/json"))
            body = Array(try JSONSerialization.data(withJSONObject: json))
        }
        let response = try client.send(method: method, target: path, headers: headers, body: body)
        for (name, value) in response.headers where name.lowercased() == "set-cookie" {
            let pair = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            guard let eq = pair.firstIndex(of: "=") else { continue }
            cookies[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        return TestAgent.Reply(response: response)
    }
}

/// Counts of what a load run saw, shared by its threads.
final class LoadRecord: Sendable {
    struct Entry: Sendable {
        var status: Int
        var seconds: Double
        var email: String
        var at: Date
    }
    private let entries = Mutex<[Entry]>([])
    func add(_ entry: Entry) { entries.withLock { $0.append(entry) } }
    var all: [Entry] { entries.withLock { $0 } }
}
