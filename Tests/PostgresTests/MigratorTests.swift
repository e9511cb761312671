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
}
