import Crypto
import Foundation
import Postgres
import Synchronization
import Testing

@testable import AuthServer

@Suite("Maintenance")
struct MaintenanceTests {
    @Test func runRemovesExpiredRowsAndOldAuditEventsInBatches() throws {
        let app = try TestApplication()
        let cli = try OperatorCLI(app, extra: #", "audit": {"retention_days": 30}"#)
        let agent = TestAgent(app)
        _ = try agent.post("/api/passkeys/authentication/start")
        _ = try agent.post("/api/passkeys/authentication/start")
        try app.sql(
            "UPDATE passkey_authentication_challenges SET expires_at = now() - interval '2 hours' WHERE id = (SELECT id FROM passkey_authentication_challenges LIMIT 1)"
        )
        try app.sql(
            """
            INSERT INTO audit_events (occurred_at, event, actor)
            SELECT now() - interval '31 days', 'sign_in.failed', 'user' FROM generate_series(1, 2500)
            """)
        try app.sql(
            "INSERT INTO audit_events (occurred_at, event, actor) VALUES (now() - interval '29 days', 'account.created', 'admin')"
        )

        let run = cli.run(["maintenance", "run"])
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        #expect(lines.contains { $0 == ["audit_events", "2500"] })
        #expect(lines.contains { $0 == ["passkey_authentication_challenges", "1"] })
        #expect(try app.count("SELECT count(*) FROM audit_events") == 1)
        #expect(try app.count("SELECT count(*) FROM passkey_authentication_challenges") == 1)
        let again = cli.run(["maintenance", "run"]).output.split(separator: "\n")
        #expect(again.contains { $0.split(separator: " ") == ["audit_events", "0"] })
    }

    @Test func aPassRepeatsBatchesUntilNothingIsDueAndLeavesItsConnectionDurable() throws {
        let app = try TestApplication()
        try app.sql(
            """
            INSERT INTO audit_events (occurred_at, event, actor)
            SELECT now() - interval '31 days', 'sign_in.failed', 'user' FROM generate_series(1, 250)
            """)
        try app.sql(
            """
            INSERT INTO passkey_authentication_challenges (id, challenge, created_at, expires_at)
            SELECT gen_random_uuid(), sha256(convert_to('c' || i, 'UTF8')), now() - interval '3 hours',
                   CASE WHEN i <= 230 THEN now() - interval '2 hours' ELSE now() + interval '5 minutes' END
            FROM generate_series(1, 240) i
            """)
        // One connection, so that the statement after the pass runs where the pass's batches ran.
        let pool = PostgresPool(url: try #require(app.configuration.databaseURL), maxConnections: 1)
        defer { pool.close() }
        // The test cluster runs with synchronous_commit off; a session of a durable cluster:
        try pool.withConnection { _ = try $0.query("SET synchronous_commit = on") }
        let removed = try #require(
            try Maintenance.runOnce(pool: pool, auditRetentionDays: 30, batchSize: 100))
        #expect(removed.contains(Maintenance.Removed(table: "audit_events", rows: 250)))
        #expect(removed.contains(Maintenance.Removed(table: "passkey_authentication_challenges", rows: 230)))
        #expect(try app.count("SELECT count(*) FROM audit_events") == 0)
        #expect(try app.count("SELECT count(*) FROM passkey_authentication_challenges") == 10)
        // Each batch commits asynchronously; what runs next on the connection must not.
        let setting = try pool.withConnection {
            try $0.query("SELECT current_setting('synchronous_commit') AS value").first?.decode(
                "value", as: String.self)
        }
        #expect(setting == "on")
        // The pass's longer statement timeout does not outlive it either.
        let timeout = try pool.withConnection {
            try $0.query("SELECT current_setting('statement_timeout') AS value").first?.decode(
                "value", as: String.self)
        }
        #expect(timeout == "\(Int(pool.statementTimeout.components.seconds))s")
    }

    /// Every rule's batches walk its key in order (`ORDER BY key LIMIT n`); without an index that
    /// leads with the key, each batch of each pass reads and sorts the whole table. The sign-in
    /// throttle had none, and an attacker spraying passwords over many addresses decides its size.
    @Test func everyRuleWalksAnIndexThatLeadsWithItsKey() throws {
        let app = try TestApplication()
        for rule in Maintenance.rules + [Maintenance.auditRule(retentionDays: 365)] {
            let indexes = try app.count(
                """
                SELECT count(*) FROM pg_index i
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                WHERE i.indrelid = \(rule.table)::regclass AND a.attname = \(rule.key) AND i.indisvalid
                """)
            #expect(indexes > 0, "\(rule.table) has no index on \(rule.key)")
        }
    }

    /// Deleting a row deletes (or checks) the rows that reference it, by its foreign keys: each
    /// referencing table needs an index that leads with the referencing columns, or every
    /// deletion of an account, an address or a session reads that whole table.
    @Test func everyForeignKeyLeadsAnIndexOfItsTable() throws {
        let app = try TestApplication()
        let unindexed: [String] = try app.sql(
            """
            SELECT c.conrelid::regclass::text || ' (' || (SELECT string_agg(a.attname, ', ') FROM pg_attribute a
                                                          WHERE a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)) || ')' AS key
            FROM pg_constraint c
            WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
              AND NOT EXISTS (
                  SELECT 1 FROM pg_index i
                  WHERE i.indrelid = c.conrelid AND i.indisvalid
                    AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
                    AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey)
            ORDER BY 1
            """
        ).map { try $0.decode("key") }
        #expect(unindexed == [])
    }

    /// The tables that take a row per request are analyzed on a small sample (migrations 0031, 0032),
    /// as autovacuum does each time a tenth of their rows is new: their payload columns get no
    /// statistics, the others a target of 10, and no column the default (which would bring the
    /// sample back to 30 000 rows). A column that an index keys on, or that a partial index's
    /// condition names, keeps statistics.
    @Test func requestTablesAreAnalyzedOnASmallSample() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        _ = try #require(try agent.authorize(AuthorizationAttempt())["code"])
        try app.sql("ANALYZE authorization_codes")
        let analyzed: [String] = try app.sql(
            "SELECT attname::text AS name FROM pg_stats WHERE tablename = 'authorization_codes' ORDER BY 1"
        ).map { try $0.decode("name") }
        #expect(analyzed.contains("code_digest") && analyzed.contains("expires_at"))
        #expect(analyzed.filter { ["scopes", "nonce", "redirect_uri", "id_token_claims"].contains($0) } == [])

        let atTheDefault: [String] = try app.sql(
            """
            SELECT attrelid::regclass::text || '.' || attname AS name FROM pg_attribute
            WHERE attrelid = ANY(ARRAY['authorization_codes', 'access_tokens', 'refresh_tokens', 'refresh_token_families',
                                       'authentication_sessions', 'session_clients',
                                       'passkey_authentication_challenges']::regclass[])
              AND attnum > 0 AND NOT attisdropped AND coalesce(attstattarget, -1) NOT IN (0, 10)
            ORDER BY 1
            """
        ).map { try $0.decode("name") }
        #expect(atTheDefault == [])

        let indexedWithout: [String] = try app.sql(
            """
            SELECT a.attrelid::regclass::text || '.' || a.attname AS name
            FROM pg_attribute a JOIN pg_index i ON i.indrelid = a.attrelid
            WHERE a.attstattarget = 0 AND a.attnum > 0 AND NOT a.attisdropped
              AND pg_get_indexdef(i.indexrelid) ~ ('\\m' || a.attname || '\\M')
            ORDER BY 1
            """
        ).map { try $0.decode("name") }
        #expect(indexedWithout == [])
    }

    /// The audit log is purged by `occurred_at` in order too: lowering `audit.retention_days` on
    /// a year of events leaves millions due at once.
    @Test func auditEventsPastTheirRetentionGoInBatchesOldestFirst() throws {
        let app = try TestApplication()
        try app.sql(
            """
            INSERT INTO audit_events (occurred_at, event, actor)
            SELECT now() - (i - 0.5) * interval '1 hour', 'sign_in.failed', 'user' FROM generate_series(1, 24 * 40) i
            """)
        let pool = PostgresPool(url: try #require(app.configuration.databaseURL), maxConnections: 1)
        defer { pool.close() }
        let removed = try #require(try Maintenance.runOnce(pool: pool, auditRetentionDays: 30, batchSize: 7))
        #expect(removed.contains(Maintenance.Removed(table: "audit_events", rows: 24 * 10)))
        #expect(
            try app.count("SELECT count(*) FROM audit_events WHERE occurred_at < now() - interval '30 days'")
                == 0)
        #expect(try app.count("SELECT count(*) FROM audit_events") == 24 * 30)
    }

    @Test func aPacedPassPausesInProportionToEachBatch() throws {
        #expect(Maintenance.Pacing(dutyCyclePercent: 100).pauseLength(after: .milliseconds(40)) == .zero)
        #expect(
            Maintenance.Pacing(dutyCyclePercent: 50).pauseLength(after: .milliseconds(40))
                == .milliseconds(40))
        #expect(
            Maintenance.Pacing(dutyCyclePercent: 20).pauseLength(after: .milliseconds(40))
                == .milliseconds(160))

        let app = try TestApplication()
        try app.sql(
            """
            INSERT INTO audit_events (occurred_at, event, actor)
            SELECT now() - interval '31 days', 'sign_in.failed', 'user' FROM generate_series(1, 250)
            """)
        let pauses = Mutex<[Duration]>([])
        let pacing = Maintenance.Pacing(dutyCyclePercent: 50) { pause in
            pauses.withLock { $0.append(pause) }
            return true
        }
        let removed = try #require(
            try Maintenance.runOnce(
                pool: app.database.pool, auditRetentionDays: 30, batchSize: 100, pacing: pacing))
        #expect(removed.contains(Maintenance.Removed(table: "audit_events", rows: 250)))
        // A pause after each of the two full batches; a rule's last batch is followed by none.
        let recorded = pauses.withLock { $0 }
        #expect(recorded.filter { $0 > .zero }.count == 2)
        #expect(recorded.count == Maintenance.rules.count + 1 + 2)
    }

    /// The pause answers whether the pass goes on: a server shutting down ends its pass after
    /// the batch under way, and the next pass removes the rest.
    @Test func aPauseThatSaysStopEndsThePassWithWhatItRemoved() throws {
        let app = try TestApplication()
        try app.sql(
            """
            INSERT INTO audit_events (occurred_at, event, actor)
            SELECT now() - interval '31 days', 'sign_in.failed', 'user' FROM generate_series(1, 250)
            """)
        let stopAtFirstPause = Maintenance.Pacing(dutyCyclePercent: 50) { $0 == .zero }
        let removed = try #require(
            try Maintenance.runOnce(
                pool: app.database.pool, auditRetentionDays: 30, batchSize: 100, pacing: stopAtFirstPause))
        #expect(removed.last == Maintenance.Removed(table: "audit_events", rows: 100))
        #expect(try app.count("SELECT count(*) FROM audit_events") == 150)
        let rest = try #require(try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 30))
        #expect(rest.last == Maintenance.Removed(table: "audit_events", rows: 150))
    }

    @Test func onlyOneInstanceRunsAPassAtATime() throws {
        let app = try TestApplication()
        let holder = PostgresPool(url: try #require(app.configuration.databaseURL), maxConnections: 1)
        defer { holder.close() }
        try holder.withConnection { connection in
            try connection.query("SELECT pg_advisory_lock(\(Maintenance.advisoryLockKey)) AS locked")
            #expect(try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365) == nil)
            let cli = try OperatorCLI(app)
            let busy = cli.run(["maintenance", "run"])
            #expect(busy.status == 1)
            #expect(busy.error.contains("another instance is running a pass"))
            try connection.query("SELECT pg_advisory_unlock(\(Maintenance.advisoryLockKey)) AS unlocked")
        }
        #expect(try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365) != nil)
    }

    @Test func workerRunsPassesAndStopsPromptly() throws {
        let app = try TestApplication()
        try app.sql(
            "INSERT INTO audit_events (occurred_at, event, actor) VALUES (now() - interval '3 days', 'account.created', 'admin')"
        )
        let (worker, buffer) = startWorker(app)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try app.count("SELECT count(*) FROM audit_events") > 0 {
            Thread.sleep(forTimeInterval: 0.1)
        }
        worker.stop()
        #expect(try app.count("SELECT count(*) FROM audit_events") == 0)
        #expect(buffer.text.contains("event=maintenance.pass"))
    }

    /// A paced pass over a backlog pauses 99 times as long as each batch took; a stop cuts the
    /// pause short and ends the pass, instead of holding the server's shutdown until the
    /// backlog is gone.
    @Test func workerStopEndsAPacedPassAfterItsBatch() throws {
        let app = try TestApplication()
        let backlog = Maintenance.batchSize * 20
        try app.sql(
            """
            INSERT INTO audit_events (occurred_at, event, actor)
            SELECT now() - interval '3 days', 'sign_in.failed', 'user' FROM generate_series(1, \(backlog))
            """)
        let (worker, buffer) = startWorker(app, dutyCyclePercent: 1)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try app.count("SELECT count(*) FROM audit_events") == backlog {
            Thread.sleep(forTimeInterval: 0.05)
        }
        worker.stop()
        let left = try app.count("SELECT count(*) FROM audit_events")
        #expect(left > 0 && left < backlog)
        #expect(
            buffer.text.contains("event=maintenance.pass step=stopped removed=audit_events:\(backlog - left)")
        )
    }

    /// A started worker that runs a pass every second and keeps audit events one day.
    private func startWorker(_ app: TestApplication, dutyCyclePercent: Int = 100) -> (
        MaintenanceWorker, LogBuffer
    ) {
        var configuration = app.configuration
        configuration.maintenance.intervalSeconds = 1
        configuration.maintenance.dutyCyclePercent = dutyCyclePercent
        configuration.audit.retentionDays = 1
        let buffer = LogBuffer()
        let worker = MaintenanceWorker(
            pool: app.database.pool, configuration: configuration, log: Log(write: { buffer.append($0) }))
        worker.start()
        return (worker, buffer)
    }

    @Test func settingsAreValidatedWithTheirPaths() throws {
        let result = ConfigurationLoader.check(
            data: Data(
                #"{"issuer": "https://id.example.com", "clients": [], "maintenance": {"interval_seconds": 5, "duty_cycle_percent": 0, "every": 1}, "audit": {"retention_days": 0}, "pid_file": ""}"#
                    .utf8))
        #expect(result.configuration == nil)
        let messages = result.problems.map(\.description)
        #expect(
            messages.contains("error: $.maintenance.interval_seconds: must be between 10 and 86400, found 5"))
        #expect(
            messages.contains("error: $.maintenance.duty_cycle_percent: must be between 1 and 100, found 0"))
        #expect(messages.contains("error: $.maintenance.every: is not a known setting"))
        #expect(messages.contains("error: $.audit.retention_days: must be between 1 and 3650, found 0"))
        #expect(messages.contains("error: $.pid_file: must not be empty"))

        let good = try #require(
            ConfigurationLoader.check(
                data: Data(
                    #"{"issuer": "https://id.example.com", "data_dir": "/srv/auth", "clients": [], "maintenance": {"interval_seconds": 60, "duty_cycle_percent": 25}, "audit": {"retention_days": 90}}"#
                        .utf8)
            ).configuration)
        #expect(good.maintenance.intervalSeconds == 60)
        #expect(good.maintenance.dutyCyclePercent == 25)
        #expect(good.audit.retentionDays == 90)
        #expect(good.resolvedPIDFile == "/srv/auth/auth-server.pid")

        // Unset, a pass spends two fifths of its time deleting (docs/operations.md, "Maintenance").
        let unset = try #require(
            ConfigurationLoader.check(
                data: Data(#"{"issuer": "https://id.example.com", "clients": []}"#.utf8)
            ).configuration)
        #expect(unset.maintenance.dutyCyclePercent == 40)
    }
}

@Suite("Metrics")
struct OperationsMetricsTests {
    @Test func signInsUpgradesTokensAndThePoolAreCounted() throws {
        let app = try OAuthFixtures.app()
        let email = TestAgent.uniqueEmail("metrics")
        #expect(try TestAgent(app).signUp(email: email).status == 201)
        #expect(try TestAgent(app).signIn(email: email, password: "wrong password!").status == 401)
        let agent = TestAgent(app)
        #expect(try agent.signIn(email: email, password: "correct horse battery").status == 200)
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        let tokens = try app.redeem(code, attempt)
        #expect(tokens.status == 200)
        #expect(try app.redeem(code, attempt).status == 400)
        let refresh = try #require(tokens.json["refresh_token"] as? String)
        let (_, other) = try app.signedInFlow()
        let otherRefresh = try #require(other.refreshToken)
        #expect(
            try app.token([("grant_type", "refresh_token"), ("refresh_token", otherRefresh)]).status == 200)
        #expect(
            try app.token([("grant_type", "refresh_token"), ("refresh_token", otherRefresh)]).status == 400)
        #expect(try app.token([("grant_type", "client_credentials"), ("scope", "api.read")]).status == 200)
        _ = refresh

        let text = try app.client.get("/metrics").text
        for line in [
            #"auth_sign_ins_total{method="password",result="success"} 1"#,
            #"auth_sign_ins_total{method="password",result="failure"} 1"#,
            #"auth_passkey_upgrades_total{result="offered"} 1"#,
            #"auth_tokens_issued_total{grant_type="authorization_code"} 2"#,
            #"auth_tokens_issued_total{grant_type="refresh_token"} 1"#,
            #"auth_tokens_issued_total{grant_type="client_credentials"} 1"#,
            "auth_refresh_token_reuse_total 1",
            "auth_code_replays_total 1",
            "# TYPE auth_db_pool_waits_total counter",
            "# TYPE auth_db_pool_max_connections gauge",
            "auth_db_pool_max_connections 10",
        ] {
            #expect(text.contains(line + "\n"), "\(line)")
        }
        #expect(text.contains(#"auth_db_pool_connections{state="in_use"} "#))
        #expect(text.contains(#"auth_db_pool_connections{state="idle"} "#))
        let build = BuildInfo.current
        #expect(text.contains("# TYPE build_info gauge\n"))
        #expect(
            text.contains(
                #"build_info{version="\#(build.version)",commit="\#(build.commit)",swift="\#(build.swift)",openssl="\#(build.openSSL)"} 1"#
                    + "\n"))
    }

    @Test func poolCountsCheckoutsThatWaited() throws {
        let url = try TestCluster.freshDatabaseURL()
        let pool = PostgresPool(url: url, maxConnections: 1)
        defer { pool.close() }
        #expect(pool.statistics.waits == 0)
        let started = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        try pool.withConnection { _ in
            Thread.detachNewThread {
                started.signal()
                _ = try? pool.query("SELECT 1 AS one")
                done.signal()
            }
            started.wait()
            while pool.statistics.waiting == 0 { Thread.sleep(forTimeInterval: 0.01) }
        }
        done.wait()
        #expect(pool.statistics.waits == 1)
    }
}
