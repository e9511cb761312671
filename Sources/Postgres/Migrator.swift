import Foundation

/// Applies numbered SQL files (`0001_accounts.sql`, `0002_passkeys.sql`, …) once each, in
/// numeric order, recording them in `schema_migrations`.
///
/// Each file runs in its own transaction together with its bookkeeping row, so a failing file
/// leaves no trace and can be fixed and retried. Files therefore must not contain their own
/// `BEGIN`/`COMMIT` or statements that refuse transactions (`CREATE INDEX CONCURRENTLY`).
/// Instances starting together serialise on an advisory lock: the later one waits, then finds
/// everything applied.
public struct Migrator: Sendable {
    public struct Migration: Sendable {
        public let version: Int
        /// The file name, e.g. `0001_accounts.sql`.
        public let name: String
        let contents: [UInt8]
        let sql: String
    }

    /// The migrations found, in the order they apply.
    public let migrations: [Migration]

    /// Arbitrary fixed key of the advisory lock that serialises migration runs.
    static let lockKey: Int64 = 5_473_201_836_102_947_011

    /// Reads every `<number>_<name>.sql` file of `directory`; other files are ignored.
    ///
    /// - Throws: `MigrationError.duplicateVersion` when two files share a number, and
    ///   `MigrationError.unreadableFile` for files that are not UTF-8 text.
    public init(directory: URL) throws {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw MigrationError.unreadableDirectory(
                path: directory.path, reason: "\(error.localizedDescription)")
        }
        var found: [Migration] = []
        for name in names {
            guard let version = try Self.version(ofFileNamed: name) else { continue }
            let bytes: [UInt8]
            do {
                bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            } catch {
                throw MigrationError.unreadableFile(file: name, reason: error.localizedDescription)
            }
            guard let sql = String(validating: bytes, as: UTF8.self), !sql.utf8.contains(0) else {
                throw MigrationError.unreadableFile(file: name, reason: "not UTF-8 text")
            }
            found.append(Migration(version: version, name: name, contents: bytes, sql: sql))
        }
        found.sort { ($0.version, $0.name) < ($1.version, $1.name) }
        for (version, group) in Dictionary(grouping: found, by: \.version) where group.count > 1 {
            throw MigrationError.duplicateVersion(version: version, files: group.map(\.name).sorted())
        }
        migrations = found
    }

    /// `0007_tokens.sql` → 7; nil for files that are not migrations.
    static func version(ofFileNamed name: String) throws -> Int? {
        guard name.hasSuffix(".sql"), let underscore = name.firstIndex(of: "_") else { return nil }
        let digits = name[..<underscore]
        let title = name[name.index(after: underscore)..<name.index(name.endIndex, offsetBy: -4)]
        guard !digits.isEmpty, !title.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return nil
        }
        guard let version = Int(digits), version <= Int(Int32.max) else {
            throw MigrationError.unreadableFile(file: name, reason: "version number too large")
        }
        return version
    }

    /// Applies the migrations not yet recorded and returns their file names.
    ///
    /// Runs on a dedicated connection to `pool.url` without statement timeout (migrations and
    /// waiting for the lock may take long). Before applying anything it checks that every
    /// applied file is unchanged.
    @discardableResult
    public func migrate(_ pool: PostgresPool, log: (String) -> Void = { _ in }) throws -> [String] {
        let connection = try PostgresConnection(url: pool.url, statementTimeout: .zero)
        defer { connection.close() }  // also releases the advisory lock
        try connection.query("SELECT pg_advisory_lock(\(Self.lockKey))")
        try connection.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version integer PRIMARY KEY,
                        name text NOT NULL,
                        checksum text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """))
        var recorded: [Int: String] = [:]
        for row in try connection.query("SELECT version, checksum FROM schema_migrations") {
            recorded[try row.decode("version", as: Int.self)] = try row.decode("checksum", as: String.self)
        }

        var pending: [(Migration, String)] = []
        for migration in migrations {
            let checksum =
                try connection.query("SELECT encode(sha256(\(migration.contents)), 'hex') AS sum")
                .first?.decode("sum", as: String.self) ?? ""
            if let applied = recorded[migration.version] {
                guard applied == checksum else {
                    throw MigrationError.checksumMismatch(
                        file: migration.name, recorded: applied, actual: checksum)
                }
            } else {
                pending.append((migration, checksum))
            }
        }

        var applied: [String] = []
        for (migration, checksum) in pending {
            log("[Migrator] step=apply migration=\(migration.name)")
            do {
                try connection.withTransaction { connection in
                    try connection.query(PostgresQuery(unsafeSQL: migration.sql))
                    try connection.execute(
                        """
                        INSERT INTO schema_migrations (version, name, checksum)
                        VALUES (\(migration.version), \(migration.name), \(checksum))
                        """)
                }
            } catch let error as PostgresError {
                log(
                    "[Migrator] step=apply migration=\(migration.name) event=failed sqlstate=\(error.sqlState ?? "-")"
                )
                throw MigrationError.failed(file: migration.name, error: error)
            }
            applied.append(migration.name)
        }
        log("[Migrator] step=done applied=\(applied.count) total=\(migrations.count)")
        return applied
    }
}
