import Foundation
import Synchronization
import Testing

@testable import Postgres

@Suite struct MigratorTests {
    /// A fresh directory of migration files, removed when the test ends.
    final class MigrationDirectory {
        let url: URL

        init(_ files: [String: String]) throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "migrations-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for (name, contents) in files { try write(name, contents) }
        }

        func write(_ name: String, _ contents: String) throws {
            try Data(contents.utf8).write(to: url.appendingPathComponent(name))
        }

        deinit { try? FileManager.default.removeItem(at: url) }
    }

    static let accounts = """
        CREATE TABLE accounts (id bigint PRIMARY KEY, name text NOT NULL);
        CREATE INDEX accounts_name ON accounts (name);
        """
    static let emails = "CREATE TABLE account_emails (account_id bigint REFERENCES accounts, email text);"

    @Test func appliesFilesInNumericOrderAndRecordsChecksums() throws {
        let directory = try MigrationDirectory([
            "10_emails.sql": Self.emails,
            "2_accounts.sql": Self.accounts,
            "README.md": "not a migration",
            "notes.sql": "not numbered",
        ])
        let migrator = try Migrator(directory: directory.url)
        #expect(migrator.migrations.map(\.name) == ["2_accounts.sql", "10_emails.sql"])

        let pool = try TestDatabase.pool()
        var lines: [String] = []
        let applied = try migrator.migrate(pool) { lines.append($0) }
        #expect(applied == ["2_accounts.sql", "10_emails.sql"])
        #expect(lines.contains { $0.contains("migration=2_accounts.sql") })

        let rows = try pool.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
        #expect(try rows.map { try $0.decode("version", as: Int.self) } == [2, 10])
        #expect(
            try rows.map { try $0.decode("name", as: String.self) } == ["2_accounts.sql", "10_emails.sql"])
        let expected = try pool.query("SELECT encode(sha256(\(Array(Self.accounts.utf8))), 'hex') AS sum")
            .first?.decode("sum", as: String.self)
        #expect(try rows.first?.decode("checksum", as: String.self) == expected)
        #expect(expected?.count == 64)

        // A second run applies nothing; a new file is picked up.
        #expect(try migrator.migrate(pool).isEmpty)
        try directory.write("11_more.sql", "ALTER TABLE accounts ADD COLUMN created_at timestamptz;")
        #expect(try Migrator(directory: directory.url).migrate(pool) == ["11_more.sql"])
    }

    @Test func editedFileIsRefusedWithAClearMessage() throws {
        let directory = try MigrationDirectory(["0001_accounts.sql": Self.accounts])
        let pool = try TestDatabase.pool()
        try Migrator(directory: directory.url).migrate(pool)
        try directory.write("0001_accounts.sql", Self.accounts + "\n-- edited\n")
        try directory.write("0002_emails.sql", Self.emails)
        do {
            try Migrator(directory: directory.url).migrate(pool)
            Issue.record("expected a checksum mismatch")
        } catch let error as MigrationError {
            guard case .checksumMismatch(let file, let recorded, let actual) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(file == "0001_accounts.sql")
            #expect(recorded != actual)
            #expect(
                error.description
                    == "migration 0001_accounts.sql was edited after it was applied (checksum \(recorded) ≠ \(actual)); add a new migration instead"
            )
        }
        // Nothing after the edited file was applied.
        #expect(try pool.query("SELECT version FROM schema_migrations").count == 1)
    }

    @Test func duplicateNumbersAreRefused() throws {
        let directory = try MigrationDirectory(["0001_a.sql": "SELECT 1;", "1_b.sql": "SELECT 2;"])
        #expect {
            _ = try Migrator(directory: directory.url)
        } throws: { error in
            guard case .duplicateVersion(let version, let files) = error as? MigrationError else {
                return false
            }
            return version == 1 && files == ["0001_a.sql", "1_b.sql"]
                && "\(error)".contains("used by more than one file")
        }
    }

    @Test func failingFileIsRolledBackEntirely() throws {
        let directory = try MigrationDirectory([
            "1_ok.sql": "CREATE TABLE ok (v integer);",
            "2_broken.sql": "CREATE TABLE half (v integer); INSERT INTO missing VALUES (1);",
        ])
        let pool = try TestDatabase.pool()
        #expect {
            try Migrator(directory: directory.url).migrate(pool)
        } throws: { error in
            guard case .failed(let file, let underlying) = error as? MigrationError else { return false }
            return file == "2_broken.sql" && underlying.kind == .syntaxOrUsage
        }
        let tables = try pool.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
        )
        #expect(
            try tables.map { try $0.decode("table_name", as: String.self) } == ["ok", "schema_migrations"])
        #expect(try pool.query("SELECT version FROM schema_migrations").count == 1)
    }

    @Test func concurrentMigratorsApplyEachFileOnce() throws {
        let directory = try MigrationDirectory([
            // Slow enough that the second run arrives while the first still holds the lock.
            "1_accounts.sql": Self.accounts + "SELECT pg_sleep(0.3);",
            "2_emails.sql": Self.emails,
        ])
        let url = try TestDatabase.freshDatabaseURL()
        let migrator = try Migrator(directory: directory.url)
        let applied = Mutex<[[String]]>([])
        let failures = Mutex<[String]>([])
        runConcurrently(2) { _ in
            let pool = PostgresPool(url: url, maxConnections: 1)
            do {
                let names = try migrator.migrate(pool)
                applied.withLock { $0.append(names) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
            pool.close()
        }
        #expect(failures.withLock { $0 } == [])
        let results = applied.withLock { $0 }.sorted { $0.count > $1.count }
        #expect(results == [["1_accounts.sql", "2_emails.sql"], []])
        let pool = PostgresPool(url: url)
        #expect(try pool.query("SELECT version FROM schema_migrations").count == 2)
    }

    // MARK: - Migrations that run beside traffic

    @Test func scriptsSplitAtTheSemicolonsThatEndStatements() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE a (v text DEFAULT 'x;y''z');
            /* block; /* nested; */ still comment; */ SELECT "odd;name" FROM a;
            DO $$ BEGIN PERFORM 1; COMMIT; END $$;
            CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $body$ SELECT 'a;b' $body$;
            SELECT E'it\\'s;', $1;
            -- only a comment at the end;
            """
        #expect(
            Migrator.statements(in: script) == [
                "CREATE TABLE a (v text DEFAULT 'x;y''z')",
                "SELECT \"odd;name\" FROM a",
                "DO $$ BEGIN PERFORM 1; COMMIT; END $$",
                "CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $body$ SELECT 'a;b' $body$",
                "SELECT E'it\\'s;', $1",
            ])
        #expect(Migrator.statements(in: "-- nothing\n\n") == [])
    }

    @Test func concurrentIndexBuildsAreRecognised() {
        #expect(Migrator.concurrentIndexName(of: "CREATE INDEX CONCURRENTLY t_v ON t (v)") == "t_v")
        #expect(
            Migrator.concurrentIndexName(of: "create unique index concurrently if not exists t_v on t(v)")
                == "t_v")
        #expect(Migrator.concurrentIndexName(of: "CREATE INDEX t_v ON t (v)") == nil)
        #expect(Migrator.concurrentIndexName(of: "CREATE INDEX CONCURRENTLY ON t (v)") == nil)
        #expect(Migrator.concurrentIndexName(of: "SELECT 1") == nil)
        #expect(Migrator.dropsIndexConcurrently("-- old\ndrop index concurrently if exists t_v"))
        #expect(!Migrator.dropsIndexConcurrently("DROP INDEX t_v"))
        #expect(!Migrator.dropsIndexConcurrently("DROP TABLE t"))
    }

    @Test func directivesAreReadFromTheLeadingCommentsAndUnknownOnesRefused() throws {
        let sum = String(repeating: "ab", count: 32)
        let read = try Migrator.directives(
            of:
                "-- migrate: no-transaction\n-- why\n-- migrate: previous-checksum \(sum)\nSELECT 1;\n-- migrate: x",
            file: "1_a.sql")
        #expect(read == Migrator.Directives(runsOutsideTransaction: true, previousChecksums: [sum]))
        #expect(try Migrator.directives(of: "SELECT 1;", file: "1_a.sql") == Migrator.Directives())
        for bad in ["-- migrate: no-transactions", "-- migrate: previous-checksum ABC", "-- migrate:"] {
            #expect {
                _ = try Migrator.directives(of: bad + "\nSELECT 1;", file: "1_a.sql")
            } throws: { error in
                guard case .unreadableFile(let file, let reason) = error as? MigrationError else {
                    return false
                }
                return file == "1_a.sql" && reason.contains("unknown directive")
            }
        }
    }

    @Test func noTransactionFileBuildsAnIndexConcurrentlyAndIsRecordedAfterItsLastStatement() throws {
        let directory = try MigrationDirectory([
            "1_accounts.sql": Self.accounts,
            "2_index.sql": """
            -- migrate: no-transaction
            -- Runs outside a transaction: CREATE INDEX CONCURRENTLY refuses one.
            ALTER TABLE accounts ADD COLUMN IF NOT EXISTS email text;
            CREATE INDEX CONCURRENTLY IF NOT EXISTS accounts_email ON accounts (email);
            """,
        ])
        let pool = try TestDatabase.pool()
        var lines: [String] = []
        let applied = try Migrator(directory: directory.url).migrate(pool) { lines.append($0) }
        #expect(applied == ["1_accounts.sql", "2_index.sql"])
        #expect(lines.contains("[Migrator] step=apply migration=2_index.sql mode=no-transaction"))
        #expect(
            try pool.query("SELECT indisvalid FROM pg_index WHERE indexrelid = 'accounts_email'::regclass")
                .first?.decode("indisvalid", as: Bool.self) == true)
        #expect(try pool.query("SELECT version FROM schema_migrations").count == 2)
    }

    @Test func invalidIndexLeftByAFailedConcurrentBuildIsDroppedAndBuiltAgain() throws {
        let directory = try MigrationDirectory([
            "1_accounts.sql": Self.accounts + "INSERT INTO accounts VALUES (1, 'same'), (2, 'same');",
            "2_unique.sql": """
            -- migrate: no-transaction
            CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS accounts_name_unique ON accounts (name);
            """,
        ])
        let pool = try TestDatabase.pool()
        #expect {
            try Migrator(directory: directory.url).migrate(pool)
        } throws: { error in
            guard case .failedPartway(let file, 1, 1, let underlying) = error as? MigrationError else {
                return false
            }
            return file == "2_unique.sql" && underlying.kind == .uniqueViolation
                && "\(error)".contains("the next start runs the file again")
        }
        // The failed build left an INVALID index behind, and the file is not recorded.
        #expect(
            try pool.query(
                "SELECT indisvalid FROM pg_index WHERE indexrelid = 'accounts_name_unique'::regclass"
            )
            .first?.decode("indisvalid", as: Bool.self) == false)
        #expect(try pool.query("SELECT version FROM schema_migrations").count == 1)

        // Once the data allows it, the next run replaces it: IF NOT EXISTS alone would keep the
        // invalid index, which enforces nothing.
        try pool.query("UPDATE accounts SET name = 'other' WHERE id = 2")
        var lines: [String] = []
        let applied = try Migrator(directory: directory.url).migrate(pool) { lines.append($0) }
        #expect(applied == ["2_unique.sql"])
        #expect(lines.contains { $0.contains("event=dropInvalidIndex index=accounts_name_unique") })
        #expect(
            try pool.query(
                "SELECT indisvalid FROM pg_index WHERE indexrelid = 'accounts_name_unique'::regclass"
            )
            .first?.decode("indisvalid", as: Bool.self) == true)
        #expect(postgresErrorKind { try pool.query("UPDATE accounts SET name = 'same'") } == .uniqueViolation)
    }

    @Test func aRewrittenFileIsAcceptedUnderItsPreviousChecksumOnly() throws {
        let directory = try MigrationDirectory(["1_accounts.sql": Self.accounts])
        let pool = try TestDatabase.pool()
        try Migrator(directory: directory.url).migrate(pool)
        let first = try #require(
            try pool.query("SELECT checksum FROM schema_migrations").first?.decode(
                "checksum", as: String.self))

        // The same schema, written to run outside a transaction: not applied again.
        try directory.write(
            "1_accounts.sql",
            """
            -- migrate: no-transaction
            -- migrate: previous-checksum \(first)
            CREATE TABLE IF NOT EXISTS accounts (id bigint PRIMARY KEY, name text NOT NULL);
            CREATE INDEX CONCURRENTLY IF NOT EXISTS accounts_name ON accounts (name);
            """)
        #expect(try Migrator(directory: directory.url).migrate(pool).isEmpty)
        #expect(
            try pool.query("SELECT checksum FROM schema_migrations").first?.decode(
                "checksum", as: String.self)
                == first)

        // A previous checksum that is not the recorded one does not excuse an edit.
        try directory.write(
            "1_accounts.sql",
            "-- migrate: previous-checksum \(String(repeating: "0", count: 64))\n" + Self.accounts)
        #expect {
            try Migrator(directory: directory.url).migrate(pool)
        } throws: { error in
            guard case .checksumMismatch(let file, _, _) = error as? MigrationError else { return false }
            return file == "1_accounts.sql"
        }
    }

    /// A database with `accounts` migrated, a pending `2_column.sql` that alters it, and a
    /// connection holding ACCESS SHARE on it in an open transaction (until it commits).
    static func accountsHeldByAReader() throws -> (
        pool: PostgresPool, holder: PostgresConnection, url: String, directory: MigrationDirectory
    ) {
        let directory = try MigrationDirectory(["1_accounts.sql": Self.accounts])
        let url = try TestDatabase.freshDatabaseURL()
        let pool = PostgresPool(url: url, maxConnections: 2)
        try Migrator(directory: directory.url).migrate(pool)
        try directory.write("2_column.sql", "ALTER TABLE accounts ADD COLUMN email text;")
        let holder = try PostgresConnection(url: url)
        try holder.query("BEGIN")
        try holder.query("SELECT count(*) FROM accounts")
        return (pool, holder, url, directory)
    }

    /// A migration run on a thread of its own; `done` is signalled when it ends.
    final class BackgroundMigration: Sendable {
        let lines = Mutex<[String]>([])
        let result = Mutex<(applied: [String]?, error: String?)>((nil, nil))
        let done = DispatchSemaphore(value: 0)

        init(_ migrator: Migrator, pool: PostgresPool) {
            Thread { [self] in
                do {
                    let applied = try migrator.migrate(pool) { line in self.lines.withLock { $0.append(line) }
                    }
                    result.withLock { $0.applied = applied }
                } catch {
                    result.withLock { $0.error = "\(error)" }
                }
                done.signal()
            }.start()
        }
    }

    /// A table held by a long transaction: the migration's ALTER TABLE gives up after its lock
    /// timeout instead of queueing every reader behind it, and succeeds once the table is free.
    @Test func lockWaitsGiveUpSoonAndAreRetried() throws {
        let (pool, holder, url, directory) = try Self.accountsHeldByAReader()
        defer { pool.close() }
        var migrator = try Migrator(directory: directory.url)
        migrator.lockTimeout = .milliseconds(100)
        migrator.retryPause = .milliseconds(100)
        migrator.lockAttempts = 100
        let migration = BackgroundMigration(migrator, pool: pool)

        // Readers keep being answered while the migration waits for the holder.
        let reader = try PostgresConnection(url: url)
        var slowest = Duration.zero
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(1500)
        while clock.now < end {
            let started = clock.now
            try reader.query("SELECT count(*) FROM accounts")
            slowest = max(slowest, clock.now - started)
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(slowest < .milliseconds(700), "a reader waited \(slowest)")
        #expect(
            migration.result.withLock { $0.applied == nil && $0.error == nil },
            "the migration must still be waiting")
        try holder.query("COMMIT")
        migration.done.wait()
        #expect(migration.result.withLock { $0.applied } == ["2_column.sql"])
        #expect(migration.result.withLock { $0.error } == nil)
        #expect(
            migration.lines.withLock { $0 }.contains { $0.contains("event=lockWaitAbandoned sqlstate=55P03") }
        )
    }

    @Test func aLockNeverFreedFailsTheMigrationAfterItsAttempts() throws {
        let (pool, holder, _, directory) = try Self.accountsHeldByAReader()
        defer { pool.close() }
        var migrator = try Migrator(directory: directory.url)
        migrator.lockTimeout = .milliseconds(50)
        migrator.retryPause = .milliseconds(10)
        migrator.lockAttempts = 3
        var lines: [String] = []
        do {
            try migrator.migrate(pool) { lines.append($0) }
            Issue.record("expected the migration to fail")
        } catch let error as MigrationError {
            guard case .failed(let file, let underlying) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(file == "2_column.sql")
            #expect(underlying.sqlState == "55P03")
        }
        #expect(lines.filter { $0.contains("event=lockWaitAbandoned") }.count == 2)
        try holder.query("COMMIT")
        #expect(try pool.query("SELECT version FROM schema_migrations").count == 1)
    }
}

extension MigratorTests {
    /// Dropping an index concurrently waits for the transactions that may use it, as a
    /// concurrent build does, and blocks no reader or writer meanwhile: a long transaction (a
    /// maintenance batch) must not make it give up after the lock timeout meant for statements
    /// that queue traffic behind them.
    @Test func aConcurrentIndexDropWaitsForOpenTransactionsWithoutGivingUp() throws {
        let (pool, holder, url, directory) = try Self.accountsHeldByAReader()
        defer { pool.close() }
        try directory.write(
            "2_column.sql", "-- migrate: no-transaction\nDROP INDEX CONCURRENTLY IF EXISTS accounts_name;\n")
        var migrator = try Migrator(directory: directory.url)
        migrator.lockTimeout = .milliseconds(50)
        migrator.retryPause = .milliseconds(10)
        migrator.lockAttempts = 3
        let migration = BackgroundMigration(migrator, pool: pool)

        // Readers and writers keep being answered while the drop waits for the holder.
        let client = try PostgresConnection(url: url)
        var slowest = Duration.zero
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(800)
        var id = 0
        while clock.now < end {
            id += 1
            let started = clock.now
            try client.query("INSERT INTO accounts (id, name) VALUES (\(id), 'n')")
            try client.query("SELECT count(*) FROM accounts WHERE name = 'n'")
            slowest = max(slowest, clock.now - started)
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(slowest < .milliseconds(500), "a request waited \(slowest)")
        #expect(
            migration.result.withLock { $0.applied == nil && $0.error == nil },
            "the drop must still be waiting")
        try holder.query("COMMIT")
        migration.done.wait()
        #expect(migration.result.withLock { $0.error } == nil)
        #expect(migration.result.withLock { $0.applied } == ["2_column.sql"])
        #expect(!migration.lines.withLock { $0 }.contains { $0.contains("event=lockWaitAbandoned") })
        #expect(
            try pool.query("SELECT to_regclass('accounts_name') IS NULL AS gone").first?.decode("gone")
                == true)
    }
}
