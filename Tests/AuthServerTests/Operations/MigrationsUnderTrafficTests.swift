import Foundation
import Postgres
import Synchronization
import Testing

@testable import AuthServer

/// The migrations on a database with enough rows that a statement holding a table's ACCESS
/// EXCLUSIVE lock through a scan, a rewrite or an index build would hold up every request that
/// touches the table, while requests keep reading and writing those tables.
@Suite("Migrations beside traffic")
struct MigrationsUnderTrafficTests {
    /// Rows in each of accounts, account_emails, authorization_codes, refresh_token_families,
    /// access_tokens and authentication_sessions.
    static let rows = 200_000

    /// A copy of the migrations folder: the files numbered below `before` (all without it), with
    /// the texts of `replacing` instead of the files of those names.
    static func migrationsFolder(before: String? = nil, replacing: [String: String] = [:]) throws -> URL {
        let all = try Database.migrationsDirectory()
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent(
            "migrations-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: all.path)
        where name.hasSuffix(".sql") && before.map({ name < $0 }) ?? true {
            let target = copy.appendingPathComponent(name)
            if let text = replacing[name] {
                try Data(text.utf8).write(to: target)
            } else {
                try FileManager.default.copyItem(at: all.appendingPathComponent(name), to: target)
            }
        }
        return copy
    }

    /// `pg_dump --schema-only` of the database, without its comments and the per-dump random
    /// `\restrict` key, so two dumps of the same schema are equal.
    static func schema(of url: String, pool: PostgresPool) throws -> String {
        let version: Int = try #require(
            try pool.query("SELECT current_setting('server_version_num')::integer AS v").first?.decode("v"))
        let matching = "/usr/lib/postgresql/\(version / 10000)/bin/pg_dump"
        let process = Process()
        if FileManager.default.isExecutableFile(atPath: matching) {
            process.executableURL = URL(fileURLWithPath: matching)
            process.arguments = ["--schema-only", "--dbname=\(url)"]
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["pg_dump", "--schema-only", "--dbname=\(url)"]
        }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "pg_dump failed")
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
            .filter { !$0.hasPrefix("--") && !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict") }
            .joined(separator: "\n")
    }

    @Test func rewrittenMigrationsLeaveTheSchemaTheirFirstFormsLeft() throws {
        let all = try Database.migrationsDirectory()
        let current = try Migrator(directory: all)

        let firstURL = try TestCluster.freshDatabaseURL()
        let first = PostgresPool(url: firstURL, maxConnections: 2)
        defer { first.close() }
        // The texts kept in the tests are the ones the rewritten files name as their previous form.
        for (name, text) in FirstFormMigrations.files {
            let checksum: String = try #require(
                try first.query("SELECT encode(sha256(\(Array(text.utf8))), 'hex') AS sum").first?.decode(
                    "sum"))
            let migration = try #require(current.migrations.first { $0.name == name })
            #expect(migration.previousChecksums == [checksum], "\(name)")
            #expect(migration.runsOutsideTransaction, "\(name)")
        }
        _ = try Migrator(directory: try Self.migrationsFolder(replacing: FirstFormMigrations.files)).migrate(
            first)

        let rewrittenURL = try TestCluster.freshDatabaseURL()
        let rewritten = PostgresPool(url: rewrittenURL, maxConnections: 2)
        defer { rewritten.close() }
        _ = try current.migrate(rewritten)

        let expected = try Self.schema(of: firstURL, pool: first)
        #expect(expected.contains("CREATE UNIQUE INDEX access_tokens_token_digest"))
        #expect(expected.contains("CONSTRAINT accounts_locale_check CHECK"))
        #expect(try Self.schema(of: rewrittenURL, pool: rewritten) == expected)

        // A database that applied the first forms takes the current folder without running them.
        #expect(try current.migrate(first).isEmpty)
    }

    /// Fills the tables the later migrations change, as a large installation would have them.
    static func seed(_ pool: PostgresPool) throws {
        try pool.withConnection { try seed(on: $0) }
        // As on a database in service: vacuumed, so autovacuum has no reason to start during the
        // test and hold up an ALTER TABLE (it yields only after deadlock_timeout, a second).
        try pool.query(
            PostgresQuery(
                unsafeSQL:
                    "VACUUM ANALYZE accounts, account_emails, authorization_codes, refresh_token_families, access_tokens, "
                    + "authentication_sessions"
            ))
    }

    /// The rows reference each other correctly by construction, so the foreign-key triggers are
    /// skipped while they are written (`session_replication_role`), which makes seeding several
    /// times faster.
    static func seed(on connection: PostgresConnection) throws {
        try connection.query("SET session_replication_role = replica")
        defer { _ = try? connection.query("RESET session_replication_role") }
        try connection.query(
            """
            INSERT INTO accounts (id, display_name, webauthn_user_handle, created_at)
            SELECT md5(g::text)::uuid, 'Account ' || g, sha256(int8send(g)), now() - g * interval '1 minute'
            FROM generate_series(1, \(rows)) g
            """)
        try connection.query(
            """
            INSERT INTO account_emails (id, account_id, email, normalized_email, verified_at)
            SELECT md5('email' || g)::uuid, md5(g::text)::uuid, 'User' || g || '@example.com',
                   'user' || g || '@example.com', CASE WHEN g % 2 = 0 THEN now() END
            FROM generate_series(1, \(rows)) g
            """)
        try connection.query(
            """
            INSERT INTO authorization_codes
                (id, code_digest, client_id, redirect_uri, scopes, account_id, auth_time, amr, expires_at)
            SELECT md5('code' || g)::uuid, sha256(('code' || g)::bytea), 'app', 'https://app.example/cb',
                   '{openid}', md5(g::text)::uuid, now(), '{hwk}', now() + interval '1 minute'
            FROM generate_series(1, \(rows)) g
            """)
        try connection.query(
            """
            INSERT INTO refresh_token_families (id, client_id, account_id, scopes, auth_time, amr, absolute_expires_at)
            SELECT md5('family' || g)::uuid, 'app', md5(g::text)::uuid, '{openid,offline_access}', now(), '{hwk}',
                   now() + interval '30 days'
            FROM generate_series(1, \(rows)) g
            """)
        try connection.query(
            """
            INSERT INTO access_tokens (jti, client_id, account_id, family_id, scopes, expires_at)
            SELECT 'jti-' || g, 'app', md5(g::text)::uuid, md5('family' || g)::uuid, '{openid}',
                   now() + interval '1 hour'
            FROM generate_series(1, \(rows)) g
            """)
        try connection.query(
            """
            INSERT INTO authentication_sessions
                (id, account_id, token_digest, amr, auth_time, last_seen_at, expires_at, idle_timeout_seconds)
            SELECT md5('session' || g)::uuid, md5(g::text)::uuid, sha256(('session' || g)::bytea), '{hwk}', now(),
                   now() - g * interval '1 second', now() + interval '30 days', 604800
            FROM generate_series(1, \(rows)) g
            """)
    }

    /// What the service does to those tables on every sign-in, token grant and signed-in page, in
    /// the columns every version since 0005 has (so the sessions are written as a server that
    /// predates their `idle_expires_at` writes them).
    static func operation(_ number: Int, account k: Int) -> (name: String, query: PostgresQuery) {
        switch number % 12 {
        case 0:
            (
                "account renamed",
                "UPDATE accounts SET display_name = \("Renamed \(k)") WHERE id = md5(\(k)::text)::uuid"
            )
        case 7:
            (
                "address read",
                "SELECT account_id, verified_at FROM account_emails WHERE normalized_email = \("user\(k)@example.com")"
            )
        case 8:
            (
                "address added",
                """
                INSERT INTO account_emails (id, account_id, email, normalized_email)
                VALUES (\(UUID()), md5(\(k)::text)::uuid, \("\(UUID())@example.com"), \("\(UUID())@example.com"))
                """
            )
        case 1: ("account read", "SELECT id, display_name FROM accounts WHERE id = md5(\(k)::text)::uuid")
        case 2:
            (
                "sign-up",
                "INSERT INTO accounts (id, display_name, webauthn_user_handle) VALUES (\(UUID()), 'New', sha256(\(UUID().uuidString)::bytea))"
            )
        case 3:
            (
                "code issued",
                """
                INSERT INTO authorization_codes
                    (id, code_digest, client_id, redirect_uri, scopes, account_id, auth_time, amr, expires_at)
                VALUES (\(UUID()), sha256(\(UUID().uuidString)::bytea), 'app', 'https://app.example/cb', '{openid}',
                        md5(\(k)::text)::uuid, now(), '{hwk}', now() + interval '1 minute')
                """
            )
        case 4:
            (
                "access token issued",
                """
                INSERT INTO access_tokens (jti, client_id, account_id, scopes, expires_at)
                VALUES (\(UUID().uuidString), 'app', md5(\(k)::text)::uuid, '{openid}', now() + interval '1 hour')
                """
            )
        case 5:
            ("access token read", "SELECT jti, revoked_at FROM access_tokens WHERE jti = \("jti-\(k)")")
        case 9:
            (
                "session touched",
                "UPDATE authentication_sessions SET last_seen_at = now() WHERE id = md5('session' || \(k))::uuid"
            )
        case 10:
            (
                "session read",
                """
                SELECT id FROM authentication_sessions
                WHERE token_digest = sha256(('session' || \(k))::bytea) AND revoked_at IS NULL AND expires_at > now()
                  AND last_seen_at + make_interval(secs => idle_timeout_seconds) > now()
                """
            )
        case 11:
            (
                "session started",
                """
                INSERT INTO authentication_sessions
                    (id, account_id, token_digest, amr, auth_time, expires_at, idle_timeout_seconds)
                VALUES (\(UUID()), md5(\(k)::text)::uuid, sha256(\(UUID().uuidString)::bytea), '{hwk}', now(),
                        now() + interval '30 days', 604800)
                """
            )
        default:
            (
                "refresh family revoked",
                "UPDATE refresh_token_families SET revoked_at = now() WHERE id = md5('family' || \(k))::uuid"
            )
        }
    }

    struct TrafficReport {
        var operations = 0
        var slowest = Duration.zero
        var slowestName = ""
        var failures: [String] = []
    }

    @Test func noRequestWaitsASecondWhileTheMigrationsRun() throws {
        let url = try TestCluster.freshDatabaseURL()
        let pool = PostgresPool(url: url, maxConnections: 2, statementTimeout: .seconds(120))
        defer { pool.close() }
        _ = try Migrator(directory: try Self.migrationsFolder(before: "0006")).migrate(pool)
        try Self.seed(pool)

        let stop = Atomic<Bool>(false)
        let report = Mutex(TrafficReport())
        let group = DispatchGroup()
        for worker in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let connection = try PostgresConnection(url: url, statementTimeout: .seconds(30))
                    defer { connection.close() }
                    var number = worker
                    let clock = ContinuousClock()
                    while !stop.load(ordering: .relaxed) {
                        // Account 1 is left alone: the backfill's result is checked on it.
                        let (name, query) = Self.operation(number, account: Int.random(in: 2...Self.rows))
                        number += 1
                        let started = clock.now
                        try connection.query(query)
                        let took = clock.now - started
                        report.withLock { report in
                            report.operations += 1
                            if took > report.slowest { (report.slowest, report.slowestName) = (took, name) }
                        }
                    }
                } catch {
                    report.withLock { $0.failures.append("\(error)") }
                }
            }.start()
        }
        // A watcher samples pg_locks every 20 ms: how long the same transaction was seen holding an
        // ACCESS EXCLUSIVE lock on one relation, whether or not traffic touches that table.
        let longestExclusive = Mutex<(held: Duration, lock: String)>((.zero, ""))
        group.enter()
        Thread {
            defer { group.leave() }
            do {
                let watcher = try PostgresConnection(url: url, statementTimeout: .seconds(30))
                defer { watcher.close() }
                let clock = ContinuousClock()
                var firstSeen: [String: ContinuousClock.Instant] = [:]
                while !stop.load(ordering: .relaxed) {
                    let now = clock.now
                    var seen: [String: ContinuousClock.Instant] = [:]
                    for row in try watcher.query(
                        """
                        SELECT virtualtransaction || ' ' || relation::regclass::text AS lock FROM pg_locks
                        WHERE locktype = 'relation' AND mode = 'AccessExclusiveLock' AND granted
                          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                        """)
                    {
                        let lock: String = try row.decode("lock")
                        seen[lock] = firstSeen[lock] ?? now
                        let held = now - (seen[lock] ?? now)
                        longestExclusive.withLock { if held > $0.held { $0 = (held, lock) } }
                    }
                    firstSeen = seen
                    Thread.sleep(forTimeInterval: 0.02)
                }
            } catch {
                report.withLock { $0.failures.append("lock watcher: \(error)") }
            }
        }.start()
        Thread.sleep(forTimeInterval: 0.3)  // traffic under way before the first lock is taken
        let before = report.withLock { $0.operations }
        var log: [String] = []
        let applied = try Migrator(directory: try Database.migrationsDirectory()).migrate(pool) {
            log.append($0)
        }
        let during = report.withLock { $0.operations } - before
        stop.store(true, ordering: .relaxed)
        group.wait()

        let result = report.withLock { $0 }
        #expect(applied.first == "0006_operations.sql")
        for rewritten in FirstFormMigrations.files.keys { #expect(applied.contains(rewritten)) }
        #expect(result.failures == [])
        #expect(during > 100, "only \(during) operations ran while migrating")
        #expect(
            result.slowest < .seconds(1),
            "\(result.slowestName) waited \(result.slowest); migration log: \(log.joined(separator: "\n"))")
        let exclusive = longestExclusive.withLock { $0 }
        #expect(exclusive.held < .seconds(1), "ACCESS EXCLUSIVE held \(exclusive.held): \(exclusive.lock)")
        // The backfill reached every account that existed before (account 1, which the traffic never
        // changes, keeps its creation time).
        #expect(
            try pool.query(
                "SELECT count(*) AS n FROM accounts WHERE id = md5('1')::uuid AND profile_updated_at = created_at"
            ).first?.decode("n", as: Int.self) == 1)
        // Every session has its idle deadline: those seeded (backfilled), those started and touched by
        // the traffic, before, during and after the migration (the trigger).
        #expect(try SessionIdleDeadlineTests.drifted(pool) == 0)
        #expect(
            try pool.query("SELECT count(*) AS n FROM authentication_sessions").first?.decode(
                "n", as: Int.self)
                ?? 0 > Self.rows)
    }
}
