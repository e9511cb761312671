import Foundation
import Postgres
import Testing

@testable import AuthServer

/// A session's idle deadline is a column, `idle_expires_at`, that a trigger derives from
/// `last_seen_at` and `idle_timeout_seconds` (migration 0026), so the maintenance purge finds
/// idle sessions through an index. These tests hold the trigger, the purge and the migration's
/// backfill to `last_seen_at + idle_timeout_seconds`, whoever writes the row.
@Suite("Session idle deadline")
struct SessionIdleDeadlineTests {
    /// Sessions whose stored deadline is not the one their columns give.
    static func drifted(_ pool: PostgresPool) throws -> Int {
        try pool.query(
            """
            SELECT count(*) AS n FROM authentication_sessions
            WHERE idle_expires_at IS DISTINCT FROM last_seen_at + make_interval(secs => idle_timeout_seconds)
            """
        ).first?.decode("n") ?? -1
    }

    static func sessions(of account: UUID, in app: TestApplication) throws -> Int {
        try app.count("SELECT count(*) FROM authentication_sessions WHERE account_id = \(account)")
    }

    @Test func anIdleSessionIsPurgedAndALiveOneIsNot() throws {
        let app = try TestApplication()
        let emails = (
            live: TestAgent.uniqueEmail("live"), idle: TestAgent.uniqueEmail("idle"),
            justIdle: TestAgent.uniqueEmail("just-idle")
        )
        let (live, _) = try PasskeyFlowTests.signedIn(app, email: emails.live)
        let (idle, _) = try PasskeyFlowTests.signedIn(app, email: emails.idle)
        let (justIdle, _) = try PasskeyFlowTests.signedIn(app, email: emails.justIdle)
        let idleAccount = try app.accountID(email: emails.idle)
        let justIdleAccount = try app.accountID(email: emails.justIdle)
        let liveAccount = try app.accountID(email: emails.live)
        // Last seen more than the idle timeout and a day ago (the purge keeps an ended session a
        // day), and one that went idle an hour ago. Only last_seen_at is written.
        try app.sql(
            """
            UPDATE authentication_sessions
            SET last_seen_at = now() - make_interval(secs => idle_timeout_seconds) - interval '1 day 1 minute'
            WHERE account_id = \(idleAccount)
            """)
        try app.sql(
            """
            UPDATE authentication_sessions
            SET last_seen_at = now() - make_interval(secs => idle_timeout_seconds) - interval '1 hour'
            WHERE account_id = \(justIdleAccount)
            """)
        #expect(try idle.send("GET", "/api/account").status == 401)
        #expect(try justIdle.send("GET", "/api/account").status == 401)
        #expect(try live.send("GET", "/api/account").status == 200)

        let removed = try #require(try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365))
        #expect(removed.first { $0.table == "authentication_sessions" }?.rows == 1)
        #expect(try Self.sessions(of: idleAccount, in: app) == 0)
        #expect(try Self.sessions(of: justIdleAccount, in: app) == 1)
        #expect(try Self.sessions(of: liveAccount, in: app) == 1)
        #expect(try live.send("GET", "/api/account").status == 200)
    }

    @Test func everyWriterOfLastSeenMovesTheDeadline() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail("touch")
        let (agent, _) = try PasskeyFlowTests.signedIn(app, email: email)
        let account = try app.accountID(email: email)
        let pool = app.database.pool
        // The server's own insert does not name the column.
        #expect(try Self.drifted(pool) == 0)

        // A server version that predates the column moves last_seen_at alone, and inserts
        // sessions without it.
        try app.sql("UPDATE authentication_sessions SET last_seen_at = now() - interval '10 minutes'")
        #expect(try Self.drifted(pool) == 0)
        try app.sql(
            """
            INSERT INTO authentication_sessions
                (id, account_id, token_digest, amr, auth_time, last_seen_at, expires_at, idle_timeout_seconds)
            VALUES (\(UUID()), \(account), sha256('older writer'), '{pwd}', now(), now() - interval '1 hour',
                    now() + interval '30 days', 600)
            """)
        #expect(try Self.drifted(pool) == 0)
        #expect(
            try app.count(
                "SELECT count(*) FROM authentication_sessions WHERE idle_expires_at < now() AND idle_timeout_seconds = 600"
            ) == 1)

        // Nor can the deadline be written apart from the columns it comes from.
        try app.sql("UPDATE authentication_sessions SET idle_expires_at = now() + interval '10 years'")
        try app.sql("UPDATE authentication_sessions SET idle_timeout_seconds = idle_timeout_seconds + 60")
        #expect(try Self.drifted(pool) == 0)

        // The once-a-minute touch of a lookup moves it.
        try app.sql("UPDATE authentication_sessions SET last_seen_at = now() - interval '2 minutes'")
        let store = SessionStore(
            pool: pool, settings: app.configuration.sessions,
            cookies: SessionCookies(configuration: app.configuration))
        #expect(try store.session(token: try #require(agent.cookies["session"])) != nil)
        #expect(try Self.drifted(pool) == 0)
        #expect(
            try app.count(
                """
                SELECT count(*) FROM authentication_sessions
                WHERE last_seen_at > now() - interval '1 minute'
                  AND idle_expires_at > now() + make_interval(secs => idle_timeout_seconds - 60)
                """) == 1)
    }

    @Test func theMigrationBackfillsSessionsThatExistedBefore() throws {
        let url = try TestCluster.freshDatabaseURL()
        let pool = PostgresPool(url: url, maxConnections: 2)
        defer { pool.close() }
        _ = try Migrator(directory: try MigrationsUnderTrafficTests.migrationsFolder(before: "0026")).migrate(
            pool)
        // Three batches' worth, last seen over the past weeks, with two idle timeouts.
        try pool.query(
            """
            INSERT INTO accounts (id, display_name, webauthn_user_handle)
            VALUES (md5('owner')::uuid, 'Owner', sha256('owner'))
            """)
        try pool.query(
            """
            INSERT INTO authentication_sessions
                (id, account_id, token_digest, amr, auth_time, last_seen_at, expires_at, idle_timeout_seconds)
            SELECT md5('session' || g)::uuid, md5('owner')::uuid, sha256(int8send(g)), '{pwd}', now(),
                   now() - g * interval '1 minute', now() + interval '30 days', CASE WHEN g % 2 = 0 THEN 3600 ELSE 604800 END
            FROM generate_series(1, 25000) g
            """)
        // A run that stopped after its first statement: the next start runs the file from the top.
        try pool.query(
            "ALTER TABLE authentication_sessions ADD COLUMN IF NOT EXISTS idle_expires_at timestamptz")
        let migrator = try Migrator(
            directory: try MigrationsUnderTrafficTests.migrationsFolder(before: "0027"))
        #expect(try migrator.migrate(pool) == ["0026_session_idle_deadline.sql"])
        #expect(try Self.drifted(pool) == 0)
        #expect(
            try pool.query(
                """
                SELECT is_nullable FROM information_schema.columns
                WHERE table_name = 'authentication_sessions' AND column_name = 'idle_expires_at'
                """
            ).first?.decode("is_nullable", as: String.self) == "NO")

        // And again from the top, as after a failure on its last statement.
        try pool.query("DELETE FROM schema_migrations WHERE version = 26")
        #expect(try migrator.migrate(pool) == ["0026_session_idle_deadline.sql"])
        #expect(
            try pool.query(
                """
                SELECT count(*) AS n FROM pg_index
                WHERE indexrelid IN ('authentication_sessions_expires'::regclass, 'authentication_sessions_revoked'::regclass,
                                     'authentication_sessions_idle_expires'::regclass)
                  AND indisvalid
                """
            ).first?.decode("n", as: Int.self) == 3)

        // Each purge rule's condition is served by one of those indexes: with sequential scans
        // ruled out, PostgreSQL still finds a plan without one, and no BitmapOr.
        let rules = Maintenance.rules.filter { $0.table == "authentication_sessions" }
        let plans = try rules.map { rule in
            try pool.withConnection { connection in
                try connection.query("SET enable_seqscan = off")
                defer { _ = try? connection.query("RESET enable_seqscan") }
                return try connection.query(
                    PostgresQuery(
                        unsafeSQL:
                            "EXPLAIN SELECT ctid FROM authentication_sessions WHERE \(rule.condition) LIMIT 1000"
                    )
                ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
            }
        }
        #expect(plans.count == 3)
        for plan in plans { #expect(!plan.contains("Seq Scan") && !plan.contains("BitmapOr"), "\(plan)") }
        #expect(plans.contains { $0.contains("authentication_sessions_idle_expires") }, "\(plans)")
    }
}
