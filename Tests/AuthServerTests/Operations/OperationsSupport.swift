import Crypto
import Foundation
import Postgres
import Synchronization
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

/// Runs operator commands in this process against a test application's database, as the
/// binary would, capturing what they print.
struct OperatorCLI {
    let configPath: String

    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    /// A config file that names `app`'s database; `extra` adds top-level members.
    init(_ app: TestApplication, extra: String = "") throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ops-\(UUID().uuidString).json")
        let url = app.configuration.databaseURL ?? ""
        let json = #"{"issuer": "http://localhost:8080", "database_url": "\#(url)", "clients": []\#(extra)}"#
        try Data(json.utf8).write(to: file)
        configPath = file.path
    }

    /// `args` with `--config FILE` appended after the subcommand words given in `command`.
    func run(_ command: [String], _ args: [String] = [], input: String? = nil) -> Result {
        Self.run(command + ["--config", configPath] + args, input: input)
    }

    static func run(_ args: [String], input: String? = nil) -> Result {
        let out = Mutex<[String]>([])
        let err = Mutex<[String]>([])
        let output = TextOutput(
            print: { line in out.withLock { $0.append(line) } },
            error: { line in err.withLock { $0.append(line) } })
        let status: Int32
        if args.first == "users" {
            status = UsersCommand.run(Array(args.dropFirst()), output: output, input: { input })
        } else {
            status = CommandLineTool.run(["auth-server"] + args, output: output)
        }
        return Result(
            status: status, output: out.withLock { $0.joined(separator: "\n") },
            error: err.withLock { $0.joined(separator: "\n") })
    }
}

extension TestApplication {
    func count(_ query: PostgresQuery) throws -> Int {
        try sql(query).first?.decode(0) ?? -1
    }

    func accountID(email: String) throws -> UUID {
        try #require(
            try sql("SELECT account_id FROM account_emails WHERE normalized_email = \(email.lowercased())")
                .first?
                .decode("account_id", as: UUID.self))
    }

    /// Whether `count` statements whose text (leading spaces aside) is `LIKE pattern` wait for
    /// a lock within `seconds`.
    func lockWaiters(like pattern: String, count: Int = 1, seconds: Double = 10) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let waiting = try self.count(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND ltrim(query) LIKE \(pattern)")
            if waiting >= count { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    func auditEvents(_ event: String, account: UUID? = nil) throws -> Int {
        try count(
            "SELECT count(*) FROM audit_events WHERE event = \(event) AND (\(account)::uuid IS NULL OR account_id = \(account))"
        )
    }
}

extension TestAgent {
    /// The WebAuthn user handle of the signed-in account.
    func userHandle() throws -> [UInt8] {
        let account = try send("GET", "/api/account")
        let signal = try #require(account.json["signal"] as? [String: Any])
        return try Base64URL.decode(try #require(signal["userId"] as? String))
    }
}
