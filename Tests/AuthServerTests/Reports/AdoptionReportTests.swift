import Foundation
import Postgres
import Testing

@testable import AuthServer

@Suite("Passkey adoption report")
struct AdoptionReportTests {
    /// Accounts in each state and audit events at known ages, written directly: the report
    /// reads only what is stored.
    static func prepare(_ pool: PostgresPool) throws {
        func account(password: Bool, passkey: Bool, identity: Bool = false) throws {
            let id = UUID()
            try pool.query(
                "INSERT INTO accounts (id, display_name, webauthn_user_handle) VALUES (\(id), 'A', sha256(\(id.uuidString)::bytea))"
            )
            if password {
                try pool.query(
                    "INSERT INTO password_credentials (account_id, password_hash) VALUES (\(id), 'x')")
            }
            if passkey {
                try pool.query(
                    """
                    INSERT INTO passkey_credentials (id, account_id, credential_id, public_key, algorithm, backup_eligible,
                                                     backed_up, aaguid, name)
                    VALUES (\(UUID()), \(id), sha256(\(id.uuidString + "c")::bytea), '\\x00', -7, true, true,
                            '\\x00000000000000000000000000000000', 'Passkey')
                    """)
            }
            if identity {
                try pool.query(
                    """
                    INSERT INTO upstream_identities (id, account_id, provider, issuer, subject, email_verified)
                    VALUES (\(UUID()), \(id), 'apple', 'https://appleid.apple.com', \(id.uuidString), true)
                    """)
            }
        }
        for _ in 0..<3 { try account(password: true, passkey: false) }
        for _ in 0..<2 { try account(password: true, passkey: true) }
        try account(password: false, passkey: true)
        try account(password: false, passkey: false, identity: true)
        try account(password: false, passkey: true, identity: true)  // counted as passkey only
        try account(password: false, passkey: false)  // in no state: not counted

        func event(_ name: String, _ detail: String, daysAgo: Int, times: Int = 1) throws {
            for _ in 0..<times {
                try pool.query(
                    """
                    INSERT INTO audit_events (occurred_at, event, actor, detail)
                    VALUES (now() - make_interval(days => \(daysAgo)::int) - interval '1 hour', \(name), 'user', \(detail)::jsonb)
                    """)
            }
        }
        try event("sign_in.succeeded", #"{"method": "password"}"#, daysAgo: 1, times: 4)
        try event("sign_in.succeeded", #"{"method": "password"}"#, daysAgo: 10, times: 2)
        try event("sign_in.succeeded", #"{"method": "password"}"#, daysAgo: 40)
        try event("sign_in.succeeded", #"{"method": "passkey"}"#, daysAgo: 2, times: 3)
        try event("sign_in.succeeded", #"{"method": "passkey"}"#, daysAgo: 20)
        try event("sign_in.succeeded", #"{"method": "upstream:apple"}"#, daysAgo: 1, times: 2)
        try event("sign_in.succeeded", #"{"method": "apple_token_exchange"}"#, daysAgo: 12)
        try event("sign_in.failed", #"{"method": "password"}"#, daysAgo: 1)
        try event("passkey.upgrade_offered", "{}", daysAgo: 3, times: 5)
        try event("passkey.upgrade_offered", "{}", daysAgo: 15)
        try event("passkey.added", #"{"ceremony": "conditional"}"#, daysAgo: 3, times: 2)
        try event("passkey.added", #"{"ceremony": "modal"}"#, daysAgo: 3)
        try event("recovery.completed", #"{"method": "passkey"}"#, daysAgo: 5)
        try event("recovery.completed", #"{"method": "password"}"#, daysAgo: 25)
    }

    static let expected = AdoptionReport(
        passwordOnly: 3, passwordAndPasskey: 2, passkeyOnly: 2, providerOnly: 1,
        last7Days: .init(
            passwordSignIns: 4, passkeySignIns: 3, providerSignIns: 2, upgradesOffered: 5,
            upgradesSucceeded: 2,
            recoveries: 1),
        last30Days: .init(
            passwordSignIns: 6, passkeySignIns: 4, providerSignIns: 3, upgradesOffered: 6,
            upgradesSucceeded: 2,
            recoveries: 2))

    @Test func figuresFromAPreparedDatabase() throws {
        let app = try TestApplication()
        try Self.prepare(app.database.pool)
        #expect(try AdoptionReport.load(on: app.database.pool) == Self.expected)
    }

    @Test func metricsCarryTheFiguresAsGauges() throws {
        let app = try TestApplication()
        try Self.prepare(app.database.pool)
        let text = try TestAgent(app).send("GET", "/metrics").text
        for line in [
            "auth_accounts{state=\"password_only\"} 3", "auth_accounts{state=\"password_and_passkey\"} 2",
            "auth_accounts{state=\"passkey_only\"} 2", "auth_accounts{state=\"provider_only\"} 1",
            "auth_sign_ins_recent{method=\"provider\",window=\"30d\"} 3",
            "auth_sign_ins_recent{method=\"password\",window=\"7d\"} 4",
            "auth_sign_ins_recent{method=\"passkey\",window=\"30d\"} 4",
            "auth_passkey_upgrades_recent{result=\"offered\",window=\"30d\"} 6",
            "auth_passkey_upgrades_recent{result=\"succeeded\",window=\"30d\"} 2",
            "auth_recoveries_recent{window=\"30d\"} 2", "# TYPE auth_accounts gauge",
        ] {
            #expect(text.contains(line + "\n"), "\(line)")
        }
    }

    @Test func commandPrintsTextAndJSON() throws {
        let url = try TestCluster.freshDatabaseURL()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "report-\(UUID().uuidString).json")
        try Data(#"{"issuer": "http://localhost:8080", "database_url": "\#(url)", "clients": []}"#.utf8)
            .write(to: file)
        let empty = try Executable.run(["report", "adoption", "--config", file.path])
        #expect(empty.status == 0, "\(empty.error)")
        #expect(empty.output.contains("password only"))

        let pool = PostgresPool(url: url, maxConnections: 1)
        defer { pool.close() }
        try Self.prepare(pool)
        let json = try Executable.run(["report", "adoption", "--config=\(file.path)", "--json"])
        #expect(json.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(
            (object["accounts"] as? [String: Int]) == [
                "password_only": 3, "password_and_passkey": 2, "passkey_only": 2, "provider_only": 1,
            ])
        let month = try #require(object["last_30_days"] as? [String: Any])
        #expect((month["sign_ins"] as? [String: Int]) == ["password": 6, "passkey": 4, "provider": 3])
        #expect((month["passkey_upgrades"] as? [String: Int]) == ["offered": 6, "succeeded": 2])
        #expect(month["recoveries"] as? Int == 2)

        let text = try Executable.run(["report", "adoption", "--config", file.path])
        #expect(text.output.contains("passkey only           2"))
        #expect(text.output.contains("provider only          1"))
    }

    @Test func usageAndExitCodes() throws {
        let help = try Executable.run(["report", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("report adoption --config FILE [--json]"))
        #expect(try Executable.run(["--help"]).output.contains("auth-server report adoption"))
        #expect(try Executable.run(["report", "adoption"]).status == 2)
        #expect(try Executable.run(["report", "nonsense", "--config", "x"]).status == 2)
        #expect(try Executable.run(["report", "adoption", "--config", "x", "--bogus"]).status == 2)
        #expect(
            try Executable.run(["report", "adoption", "--config", "/nonexistent/config.json"]).status == 1)
    }
}
