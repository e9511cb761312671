import Foundation

/// Applies numbered SQL files (`0001_accounts.sql`, `0002_passkeys.sql`, …) once each, in
/// numeric order, recording them in `schema_migrations`.
///
/// By default a file runs in its own transaction together with its bookkeeping row, so a failing
/// file leaves no trace and can be fixed and retried. Such files must not contain their own
/// `BEGIN`/`COMMIT` or statements that refuse transactions.
///
/// A file whose leading comments say `-- migrate: no-transaction` runs statement by statement,
/// each committing on its own, and its bookkeeping row is written after the last one. This is
/// what changes to large tables under traffic need: `CREATE INDEX CONCURRENTLY`, a constraint
/// added `NOT VALID` and validated in a later statement, a backfill in batches that commit
/// (`DO` with `COMMIT`). A failure leaves the earlier statements applied and the file unrecorded,
/// so every statement must be safe to run again (`IF NOT EXISTS`, `DROP … IF EXISTS` before
/// `ADD CONSTRAINT`); an index that a failed concurrent build left INVALID is dropped before its
/// `CREATE INDEX CONCURRENTLY` runs again, since `IF NOT EXISTS` would keep the broken one.
///
/// Every statement waits at most `lockTimeout` for its locks (PostgreSQL's `lock_timeout`):
/// while an `ALTER TABLE` waits for its ACCESS EXCLUSIVE lock, every request that touches the
/// table queues behind it, so giving up quickly and trying again later (`lockAttempts` times,
/// `retryPause` apart) keeps the service answering. `CREATE INDEX CONCURRENTLY` is exempt: its
/// waits (for older transactions to end) block no one.
///
/// Instances starting together serialise on an advisory lock: the later one waits, then finds
/// everything applied.
public struct Migrator: Sendable {
    public struct Migration: Sendable {
        public let version: Int
        /// The file name, e.g. `0001_accounts.sql`.
        public let name: String
        let contents: [UInt8]
        let sql: String
        /// `-- migrate: no-transaction`: statement by statement, each committing on its own.
        public let runsOutsideTransaction: Bool
        /// `-- migrate: previous-checksum <sha256 hex>`: the checksums of earlier, equivalent forms
        /// of this file. A database that recorded one of them applied this migration already; the
        /// file was rewritten (for example to build an index concurrently) without changing the
        /// schema it leaves.
        public let previousChecksums: [String]
    }

    /// The migrations found, in the order they apply.
    public let migrations: [Migration]

    /// The longest a statement waits for a lock before it gives up and is tried again. Shorter
    /// than PostgreSQL's default `deadlock_timeout` (1 s): when a migration that locks two tables
    /// closes a cycle with a request that locks them in the other order, the migration gives up
    /// first, and the request goes on instead of being chosen as the deadlock's victim.
    public var lockTimeout: Duration = .milliseconds(500)
    /// How often a statement (or a transactional file) that timed out waiting for a lock, or lost
    /// a deadlock, is tried before the migration fails.
    public var lockAttempts = 30
    /// The pause between such attempts, during which the traffic the statement held up drains.
    public var retryPause: Duration = .seconds(1)

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
            let directives = try Self.directives(of: sql, file: name)
            found.append(
                Migration(
                    version: version, name: name, contents: bytes, sql: sql,
                    runsOutsideTransaction: directives.runsOutsideTransaction,
                    previousChecksums: directives.previousChecksums))
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

    /// What a file's leading comment lines (`-- migrate: …`) ask for.
    struct Directives: Equatable {
        var runsOutsideTransaction = false
        var previousChecksums: [String] = []
    }

    /// Reads the `-- migrate:` lines among the comments that open a file. An unknown directive
    /// is refused rather than ignored: a misspelt `no-transaction` would otherwise run a
    /// concurrent index build inside a transaction, which PostgreSQL refuses only at run time.
    static func directives(of sql: String, file: String) throws -> Directives {
        var directives = Directives()
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard trimmed.hasPrefix("--") else { break }
            let comment = trimmed.dropFirst(2).trimmingCharacters(in: .whitespaces)
            guard comment.hasPrefix("migrate:") else { continue }
            let words = comment.dropFirst("migrate:".count).split(separator: " ").map(String.init)
            switch words.first {
            case "no-transaction" where words.count == 1:
                directives.runsOutsideTransaction = true
            case "previous-checksum"
            where words.count == 2 && words[1].count == 64
                && words[1].allSatisfy({ $0.isHexDigit && !$0.isUppercase }):
                directives.previousChecksums.append(words[1])
            default:
                throw MigrationError.unreadableFile(
                    file: file,
                    reason: "unknown directive \"\(comment)\" (known: \"migrate: no-transaction\", "
                        + "\"migrate: previous-checksum <64 lowercase hex digits>\")")
            }
        }
        return directives
    }

    /// Splits a script into its statements at the semicolons that end them, skipping those
    /// inside quotes ('…', E'…', "…"), dollar quotes ($$…$$, $tag$…$tag$) and comments.
    /// Statements that hold nothing but comments are dropped.
    static func statements(in sql: String) -> [String] {
        let characters = Array(sql.unicodeScalars)
        var statements: [String] = []
        // Where the statement's first character that is not a comment or whitespace is.
        var codeStart = 0
        var hasCode = false
        var index = 0
        func at(_ offset: Int) -> Unicode.Scalar? {
            index + offset < characters.count ? characters[index + offset] : nil
        }
        func isIdentifierCharacter(_ scalar: Unicode.Scalar?) -> Bool {
            guard let scalar else { return false }
            return scalar == "_" || scalar == "$" || scalar.properties.isAlphabetic
                || ("0"..."9").contains(scalar)
        }
        func finish(upTo end: Int) {
            if hasCode {
                var text = String.UnicodeScalarView()
                text.append(contentsOf: characters[codeStart..<end])
                statements.append(String(text).trimmingCharacters(in: .whitespacesAndNewlines))
            }
            hasCode = false
        }
        while index < characters.count {
            let character = characters[index]
            if character == "-" && at(1) == "-" {
                while index < characters.count && characters[index] != "\n" { index += 1 }
                continue
            }
            if character == "/" && at(1) == "*" {
                var depth = 0
                repeat {
                    if characters[index] == "/" && at(1) == "*" {
                        depth += 1
                        index += 2
                    } else if characters[index] == "*" && at(1) == "/" {
                        depth -= 1
                        index += 2
                    } else {
                        index += 1
                    }
                } while depth > 0 && index < characters.count
                continue
            }
            if character == ";" {
                finish(upTo: index)
                index += 1
                continue
            }
            if !hasCode && !character.properties.isWhitespace {
                hasCode = true
                codeStart = index
            }
            if character == "'" || character == "\"" {
                let backslashEscapes =
                    character == "'" && index > 0
                    && (characters[index - 1] == "E" || characters[index - 1] == "e")
                    && !isIdentifierCharacter(index > 1 ? characters[index - 2] : nil)
                index += 1
                while index < characters.count {
                    if backslashEscapes && characters[index] == "\\" {
                        index += 2
                    } else if characters[index] == character {
                        // A doubled quote stands for itself and continues the literal.
                        if at(1) == character {
                            index += 2
                        } else {
                            break
                        }
                    } else {
                        index += 1
                    }
                }
                index += 1
                continue
            }
            if character == "$" && !isIdentifierCharacter(index > 0 ? characters[index - 1] : nil) {
                // $tag$ where the tag is empty or an identifier that does not start with a digit.
                var end = index + 1
                while end < characters.count && characters[end] != "$"
                    && (characters[end] == "_" || characters[end].properties.isAlphabetic
                        || (end > index + 1 && ("0"..."9").contains(characters[end])))
                {
                    end += 1
                }
                if end < characters.count && characters[end] == "$" {
                    let tag = Array(characters[index...end])
                    var search = end + 1
                    while search < characters.count
                        && !(characters[search] == "$"
                            && Array(characters[search..<min(search + tag.count, characters.count)]) == tag)
                    {
                        search += 1
                    }
                    index = min(search + tag.count, characters.count)
                    continue
                }
            }
            index += 1
        }
        finish(upTo: characters.count)
        return statements
    }

    /// The index a `CREATE [UNIQUE] INDEX CONCURRENTLY [IF NOT EXISTS] name …` statement builds;
    /// nil for any other statement.
    static func concurrentIndexName(of statement: String) -> String? {
        let words =
            statements(in: statement).first?
            .split(whereSeparator: { $0.isWhitespace || $0 == "(" }).map(String.init) ?? []
        var rest = words[...]
        func take(_ word: String) -> Bool {
            guard rest.first?.uppercased() == word else { return false }
            rest = rest.dropFirst()
            return true
        }
        guard take("CREATE") else { return nil }
        _ = take("UNIQUE")
        guard take("INDEX"), take("CONCURRENTLY") else { return nil }
        if take("IF") {
            guard take("NOT"), take("EXISTS") else { return nil }
        }
        guard let name = rest.first, name.uppercased() != "ON",
            name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." })
        else { return nil }
        return name
    }

    /// Whether the statement is a `DROP INDEX CONCURRENTLY …`.
    static func dropsIndexConcurrently(_ statement: String) -> Bool {
        let words = statements(in: statement).first?.split(whereSeparator: \.isWhitespace).prefix(3) ?? []
        return words.map { $0.uppercased() } == ["DROP", "INDEX", "CONCURRENTLY"]
    }

    /// Applies the migrations not yet recorded and returns their file names.
    ///
    /// Runs on a dedicated connection to `pool.url` without statement timeout (migrations and
    /// waiting for the advisory lock may take long). Before applying anything it checks that
    /// every applied file is unchanged, or was recorded under one of its previous checksums.
    @discardableResult
    public func migrate(_ pool: PostgresPool, log: (String) -> Void = { _ in }) throws -> [String] {
        let connection = try PostgresConnection(url: pool.url, statementTimeout: .zero)
        defer { connection.close() }  // also releases the advisory lock
        // Polled rather than waited for: a session blocked in pg_advisory_lock holds a snapshot,
        // and CREATE INDEX CONCURRENTLY in the instance that holds the lock waits for every older
        // snapshot, which would close a deadlock between the two.
        while try connection.query("SELECT pg_try_advisory_lock(\(Self.lockKey)) AS locked").first?
            .decode("locked", as: Bool.self) != true
        {
            Thread.sleep(forTimeInterval: 0.2)
        }
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
                guard applied == checksum || migration.previousChecksums.contains(applied) else {
                    throw MigrationError.checksumMismatch(
                        file: migration.name, recorded: applied, actual: checksum)
                }
            } else {
                pending.append((migration, checksum))
            }
        }

        var applied: [String] = []
        for (migration, checksum) in pending {
            let record: PostgresQuery = """
                INSERT INTO schema_migrations (version, name, checksum)
                VALUES (\(migration.version), \(migration.name), \(checksum))
                """
            if migration.runsOutsideTransaction {
                log("[Migrator] step=apply migration=\(migration.name) mode=no-transaction")
                let statements = Self.statements(in: migration.sql)
                for (number, statement) in statements.enumerated() {
                    do {
                        try apply(statement, of: migration, on: connection, log: log)
                    } catch let error as PostgresError {
                        log(
                            "[Migrator] step=apply migration=\(migration.name) statement=\(number + 1) event=failed sqlstate=\(error.sqlState ?? "-")"
                        )
                        throw MigrationError.failedPartway(
                            file: migration.name, statement: number + 1, of: statements.count, error: error)
                    }
                }
                do {
                    try connection.execute(record)
                } catch let error as PostgresError {
                    throw MigrationError.failedPartway(
                        file: migration.name, statement: statements.count, of: statements.count, error: error)
                }
            } else {
                log("[Migrator] step=apply migration=\(migration.name)")
                do {
                    try retryingLockWaits(migration, log: log) {
                        try connection.withTransaction { connection in
                            try connection.query(
                                PostgresQuery(
                                    unsafeSQL:
                                        "SET LOCAL lock_timeout = \(PostgresConnection.milliseconds(lockTimeout))"
                                ))
                            try connection.query(PostgresQuery(unsafeSQL: migration.sql))
                            try connection.execute(record)
                        }
                    }
                } catch let error as PostgresError {
                    log(
                        "[Migrator] step=apply migration=\(migration.name) event=failed sqlstate=\(error.sqlState ?? "-")"
                    )
                    throw MigrationError.failed(file: migration.name, error: error)
                }
            }
            applied.append(migration.name)
        }
        log("[Migrator] step=done applied=\(applied.count) total=\(migrations.count)")
        return applied
    }

    /// Runs one statement of a no-transaction file on its own, after dropping an INVALID index a
    /// failed concurrent build of the same name left behind.
    private func apply(
        _ statement: String, of migration: Migration, on connection: PostgresConnection,
        log: (String) -> Void
    ) throws {
        let index = Self.concurrentIndexName(of: statement)
        // A concurrent build or drop waits for older transactions, which blocks no one; only
        // statements that queue traffic behind their lock wait must give up early.
        let waitsWithoutBlocking = index != nil || Self.dropsIndexConcurrently(statement)
        let timeout = waitsWithoutBlocking ? 0 : PostgresConnection.milliseconds(lockTimeout)
        try connection.query(PostgresQuery(unsafeSQL: "SET lock_timeout = \(timeout)"))
        defer { _ = try? connection.query(PostgresQuery(unsafeSQL: "RESET lock_timeout")) }
        try retryingLockWaits(migration, log: log) {
            if let index {
                let invalid =
                    try connection.query(
                        "SELECT NOT indisvalid AS invalid FROM pg_index WHERE indexrelid = to_regclass(\(index))"
                    )
                    .first?.decode("invalid", as: Bool.self) ?? false
                if invalid {
                    log(
                        "[Migrator] step=apply migration=\(migration.name) event=dropInvalidIndex index=\(index)"
                    )
                    try connection.query(
                        PostgresQuery(unsafeSQL: "DROP INDEX CONCURRENTLY IF EXISTS \(index)"))
                }
            }
            try connection.query(PostgresQuery(unsafeSQL: statement))
        }
    }

    /// Runs `body` again after a lock timeout (55P03) or a lost deadlock (40P01), up to
    /// `lockAttempts` times in all.
    private func retryingLockWaits(_ migration: Migration, log: (String) -> Void, _ body: () throws -> Void)
        throws
    {
        var attempt = 1
        while true {
            do {
                return try body()
            } catch let error as PostgresError
                where (error.sqlState == "55P03" || error.sqlState == "40P01") && attempt < lockAttempts
            {
                log(
                    "[Migrator] step=apply migration=\(migration.name) event=lockWaitAbandoned sqlstate=\(error.sqlState ?? "-") attempt=\(attempt)"
                )
                attempt += 1
                Thread.sleep(forTimeInterval: Double(PostgresConnection.milliseconds(retryPause)) / 1000)
            }
        }
    }
}
