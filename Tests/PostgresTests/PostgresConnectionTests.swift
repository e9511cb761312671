import Foundation
import Synchronization
import Testing

@testable import Postgres

@Suite struct PostgresConnectionTests {
    @Test func transactionCommitsOnSuccess() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE t (v integer)")
        let inserted = try connection.withTransaction { connection in
            try connection.execute("INSERT INTO t VALUES (1), (2)")
        }
        #expect(inserted == 2)
        #expect(try connection.query("SELECT v FROM t").count == 2)
    }

    @Test func errorInBodyRollsBackAndRethrowsTheBodysError() throws {
        struct BodyFailed: Error {}
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE t (v integer)")
        #expect(throws: BodyFailed.self) {
            try connection.withTransaction(isolation: .serializable) { connection in
                try connection.execute("INSERT INTO t VALUES (1)")
                throw BodyFailed()
            }
        }
        #expect(try connection.query("SELECT v FROM t").isEmpty)
        #expect(connection.isUsable)
        #expect(!connection.isInTransaction)
    }

    @Test func failedRollbackReportsBothErrors() throws {
        struct BodyFailed: Error {}
        let url = try TestDatabase.freshDatabaseURL()
        let connection = try PostgresConnection(url: url)
        let admin = try PostgresConnection(url: url)
        do {
            try connection.withTransaction { connection in
                try connection.query("SELECT 1")
                // The server ends this session behind the body's back, then the body fails.
                try admin.query("SELECT pg_terminate_backend(\(connection.backendPID), \(10_000))")
                throw BodyFailed()
            }
            Issue.record("expected an error")
        } catch let error as PostgresRollbackError {
            #expect(error.bodyError is BodyFailed)
            #expect(
                error.rollbackError.kind == .adminShutdown || error.rollbackError.kind == .connectionFailure)
            #expect(error.description == "transaction failed and could not be rolled back")
        }
        #expect(!connection.isUsable)
    }

    @Test func swallowedStatementErrorIsNotCommittedSilently() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE t (v integer PRIMARY KEY)")
        #expect(throws: PostgresError.self) {
            try connection.withTransaction { connection in
                try connection.execute("INSERT INTO t VALUES (1)")
                _ = try? connection.execute("INSERT INTO t VALUES (1)")
            }
        }
        #expect(try connection.query("SELECT v FROM t").isEmpty)
    }

    @Test func queuedStatementsGoWithTheNextStatementWhichThrowsTheirError() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE t (v integer PRIMARY KEY)")
        let count = try connection.withTransaction { connection in
            try connection.queue("INSERT INTO t VALUES (\(Int32(1)))")
            try connection.queue("INSERT INTO t VALUES (\(Int32(2)))")
            return try connection.query("SELECT count(*) AS n FROM t").first?.decode("n", as: Int.self)
        }
        #expect(count == 2)
        // `queue` sends nothing: the duplicate's error comes from the next statement, which does
        // not run, and the whole transaction rolls back.
        var queuedAll = false
        var ranSelect = false
        #expect(
            postgresErrorKind {
                try connection.withTransaction { connection in
                    try connection.queue("INSERT INTO t VALUES (\(Int32(3)))")
                    try connection.queue("INSERT INTO t VALUES (\(Int32(1)))")
                    try connection.queue("INSERT INTO t VALUES (\(Int32(4)))")
                    queuedAll = true
                    _ = try connection.query("SELECT v FROM t WHERE v = \(Int32(3))")
                    ranSelect = true
                }
            } == .uniqueViolation)
        #expect(queuedAll && !ranSelect)
        #expect(
            try connection.query("SELECT v FROM t ORDER BY v").map { try $0.decode("v", as: Int.self) } == [
                1, 2,
            ])
        #expect(connection.isUsable && !connection.isInTransaction)
        // A value PostgreSQL cannot hold is refused before anything is sent.
        #expect(
            postgresErrorKind {
                try connection.withTransaction { connection in
                    try connection.queue("INSERT INTO t VALUES (\(Int32(5)))")
                    _ = try connection.query("SELECT \("a\u{0}b")::text AS v")
                }
            } == .dataException)
        #expect(try connection.query("SELECT count(*) AS n FROM t").first?.decode("n", as: Int.self) == 2)
        #expect(connection.isUsable && !connection.isInTransaction)
        // Also when it was queued, with or without statements sent before it.
        for sendFirst in [false, true] {
            #expect(
                postgresErrorKind {
                    try connection.withTransaction { connection in
                        if sendFirst { try connection.execute("INSERT INTO t VALUES (\(Int32(6)))") }
                        try connection.queue("INSERT INTO t VALUES (\(Int32(7))), (length(\("a\u{0}b")))")
                    }
                } == .dataException)
            #expect(try connection.query("SELECT count(*) AS n FROM t").first?.decode("n", as: Int.self) == 2)
            #expect(connection.isUsable && !connection.isInTransaction)
        }
    }

    @Test func whatIsQueuedLastGoesWithTheCommit() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE t (v integer PRIMARY KEY)")
        try connection.withTransaction { connection in
            try connection.queue("INSERT INTO t VALUES (\(Int32(1)))")
        }
        #expect(try connection.query("SELECT v FROM t").count == 1)
        // A failure there is thrown by `withTransaction`, and nothing of the transaction stays.
        #expect(
            postgresErrorKind {
                try connection.withTransaction { connection in
                    try connection.execute("INSERT INTO t VALUES (\(Int32(2)))")
                    try connection.queue("INSERT INTO t VALUES (\(Int32(1)))")
                }
            } == .uniqueViolation)
        #expect(try connection.query("SELECT v FROM t").count == 1)
        #expect(connection.isUsable && !connection.isInTransaction)
        // The body's own error wins over what was queued and never sent.
        struct BodyFailed: Error {}
        #expect(throws: BodyFailed.self) {
            try connection.withTransaction { connection in
                try connection.queue("INSERT INTO t VALUES (\(Int32(1)))")
                throw BodyFailed()
            }
        }
        #expect(connection.isUsable && !connection.isInTransaction)
        // Outside a transaction there is nothing to wait for: the statement runs at once.
        #expect(
            postgresErrorKind { try connection.queue("INSERT INTO t VALUES (\(Int32(1)))") }
                == .uniqueViolation)
    }

    /// `whileCommitting` runs once the `COMMIT` is sent (another session sees the rows while
    /// it runs), and its value comes back only when the commit succeeded.
    @Test func whileCommittingOverlapsTheCommitAndNeedsItToSucceed() throws {
        let url = try TestDatabase.freshDatabaseURL()
        let connection = try PostgresConnection(url: url)
        let observer = try PostgresConnection(url: url)
        try connection.query("CREATE TABLE t (v integer PRIMARY KEY)")
        let seen = try connection.withTransaction(
            { connection in try connection.queue("INSERT INTO t VALUES (\(Int32(1)))") },
            whileCommitting: { _ in
                for _ in 0..<500 {
                    if try observer.query("SELECT v FROM t").count == 1 { return true }
                    usleep(10_000)
                }
                return false
            })
        #expect(seen)
        #expect(connection.isUsable && !connection.isInTransaction)

        // A commit that fails (a deferred constraint is checked by the COMMIT itself): its
        // error is thrown, the value is dropped, nothing stays.
        try connection.query("CREATE TABLE d (v integer UNIQUE DEFERRABLE INITIALLY DEFERRED)")
        let ran = Mutex(false)
        #expect(
            postgresErrorKind {
                _ = try connection.withTransaction(
                    { connection in
                        try connection.execute("INSERT INTO d VALUES (\(Int32(1)))")
                        try connection.queue("INSERT INTO d VALUES (\(Int32(1)))")
                    },
                    whileCommitting: { _ in
                        ran.withLock { $0 = true }
                        return "signed"
                    })
            } == .uniqueViolation)
        #expect(ran.withLock { $0 })
        #expect(try connection.query("SELECT v FROM d").isEmpty)
        #expect(connection.isUsable && !connection.isInTransaction)

        // The body's error: rolled back, and `whileCommitting` never runs.
        struct BodyFailed: Error {}
        #expect(throws: BodyFailed.self) {
            try connection.withTransaction(
                { connection -> Int in
                    try connection.execute("INSERT INTO t VALUES (\(Int32(2)))")
                    throw BodyFailed()
                },
                whileCommitting: { _ in Issue.record("ran after a failed body") })
        }
        // An error of `whileCommitting` is thrown once the commit is read: the rows stay.
        struct SigningFailed: Error {}
        #expect(throws: SigningFailed.self) {
            try connection.withTransaction(
                { connection in try connection.queue("INSERT INTO t VALUES (\(Int32(3)))") },
                whileCommitting: { _ in throw SigningFailed() })
        }
        #expect(try connection.query("SELECT v FROM t ORDER BY v").map { try $0.decode("v", as: Int.self) } == [1, 3])
        #expect(connection.isUsable && !connection.isInTransaction)
        #expect(try connection.query("SELECT 1 AS one").count == 1)
    }

    @Test func aTransactionThatRunsNothingSendsNothing() throws {
        let url = try TestDatabase.freshDatabaseURL()
        let connection = try PostgresConnection(url: url)
        let admin = try PostgresConnection(url: url)
        try admin.query("SELECT pg_terminate_backend(\(connection.backendPID), \(10_000))")
        // No BEGIN and no COMMIT went to the server that is gone, so nothing failed.
        #expect(try connection.withTransaction { _ in 7 } == 7)
        #expect(!connection.isInTransaction)
        #expect(postgresErrorKind { try connection.query("SELECT 1") } != nil)
    }

    @Test func statementsPreparedInAPipelineAreKept() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE t (v integer)")
        func values() throws -> [Int] {
            try connection.query("SELECT v FROM t ORDER BY v").map { try $0.decode("v", as: Int.self) }
        }
        func prepared() throws -> [String] {
            try connection.query("SELECT statement FROM pg_prepared_statements ORDER BY statement")
                .map { try $0.decode("statement", as: String.self) }
        }
        try connection.withTransaction { connection in
            for v in 1...3 { try connection.queue("INSERT INTO t VALUES (\(Int32(v)))") }
            try connection.queue("SELECT \(Int32(1)) + 1 AS v")
        }
        #expect(try values() == [1, 2, 3])
        #expect(try prepared() == ["INSERT INTO t VALUES ($1)", "SELECT $1 + 1 AS v"])
        // One that cannot be prepared fails the transaction, the statements after it do not
        // run, and it is not kept.
        #expect(
            postgresErrorKind {
                try connection.withTransaction { connection in
                    try connection.queue("INSERT INTO t VALUES (\(Int32(4)), \(Int32(5))), (1)")
                    try connection.queue("INSERT INTO t VALUES (\(Int32(6)))")
                }
            } == .syntaxOrUsage)
        #expect(try values() == [1, 2, 3])
        #expect(try prepared().count == 2)
        // One the server forgot fails its transaction and is prepared again afterwards.
        try connection.query("DEALLOCATE ALL")
        #expect(
            postgresErrorKind {
                try connection.withTransaction { connection in
                    try connection.queue("INSERT INTO t VALUES (\(Int32(7)))")
                }
            } != nil)
        try connection.withTransaction { connection in
            try connection.queue("INSERT INTO t VALUES (\(Int32(8)))")
        }
        #expect(try values() == [1, 2, 3, 8])
        #expect(connection.isUsable && !connection.isInTransaction)
    }

    @Test func uniqueViolationCarriesSQLStateAndConstraint() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE accounts (email text CONSTRAINT accounts_email_key UNIQUE)")
        try connection.execute("INSERT INTO accounts VALUES (\("a@example.com"))")
        do {
            try connection.execute("INSERT INTO accounts VALUES (\("a@example.com"))")
            Issue.record("expected a unique violation")
        } catch let error as PostgresError {
            #expect(error.kind == .uniqueViolation)
            #expect(error.sqlState == "23505")
            #expect(error.constraint == "accounts_email_key")
            #expect(error.description == "unique violation")
            #expect(error.detail.contains("duplicate key"))
        }
        #expect(connection.isUsable)
    }

    @Test func integrityAndSyntaxErrorsMapToKinds() throws {
        let connection = try TestDatabase.connection()
        try connection.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE TABLE parent (id integer PRIMARY KEY);
                    CREATE TABLE child (id integer NOT NULL REFERENCES parent, n integer CHECK (n > 0))
                    """))
        #expect(
            postgresErrorKind { try connection.execute("INSERT INTO child VALUES (1, 1)") }
                == .foreignKeyViolation)
        try connection.execute("INSERT INTO parent VALUES (1)")
        #expect(
            postgresErrorKind { try connection.execute("INSERT INTO child VALUES (1, 0)") } == .checkViolation
        )
        #expect(
            postgresErrorKind { try connection.execute("INSERT INTO child VALUES (NULL, 1)") }
                == .notNullViolation)
        #expect(postgresErrorKind { try connection.execute("SELEC 1") } == .syntaxOrUsage)
        #expect(postgresErrorKind { try connection.execute("SELECT * FROM missing") } == .syntaxOrUsage)
        #expect(postgresErrorKind { try connection.execute("SELECT \("nope")::integer") } == .dataException)
        #expect(connection.isUsable)
    }

    @Test func serializationFailureAndDeadlockAreRecognised() throws {
        let connection = try TestDatabase.connection()
        let raise40001 = PostgresQuery(
            unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$")
        let raise40P01 = PostgresQuery(
            unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40P01'; END $$")
        #expect(postgresErrorKind { try connection.query(raise40001) } == .serializationFailure)
        #expect(postgresErrorKind { try connection.query(raise40P01) } == .deadlockDetected)
    }

    @Test func concurrentSerializableTransactionsConflict() throws {
        let url = try TestDatabase.freshDatabaseURL()
        let first = try PostgresConnection(url: url)
        let second = try PostgresConnection(url: url)
        try first.query(
            PostgresQuery(unsafeSQL: "CREATE TABLE counter (n integer); INSERT INTO counter VALUES (0)"))
        // Interleave two read-then-write transactions by hand on two connections.
        try first.query(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL SERIALIZABLE"))
        try second.query(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL SERIALIZABLE"))
        _ = try first.query("SELECT n FROM counter")
        _ = try second.query("SELECT n FROM counter")
        try first.execute("UPDATE counter SET n = n + 1")
        try first.query(PostgresQuery(unsafeSQL: "COMMIT"))
        #expect(
            postgresErrorKind { try second.execute("UPDATE counter SET n = n + 1") } == .serializationFailure)
        try second.query(PostgresQuery(unsafeSQL: "ROLLBACK"))
    }

    @Test func statementTimeoutCancelsTheQuery() throws {
        let connection = try TestDatabase.connection(statementTimeout: .milliseconds(200))
        #expect(postgresErrorKind { try connection.query("SELECT pg_sleep(30)") } == .queryCanceled)
        #expect(connection.isUsable)
        #expect(try connection.query("SELECT 1 AS one").first?.decode("one", as: Int.self) == 1)
    }

    @Test func sessionIsUTCAndUTF8() throws {
        let connection = try TestDatabase.connection()
        let row = try #require(
            try connection.query(
                "SELECT current_setting('TimeZone') AS tz, current_setting('client_encoding') AS enc, '2001-02-03 04:05:06+09'::timestamptz::text AS ts"
            ).first)
        #expect(try row.decode("tz", as: String.self) == "UTC")
        #expect(try row.decode("enc", as: String.self) == "UTF8")
        #expect(try row.decode("ts", as: String.self) == "2001-02-02 19:05:06+00")
    }

    @Test func textValuesComeBackExactlyWithTheirSpacesAndNewlines() throws {
        let connection = try TestDatabase.connection()
        let value = "  two words\n\t"
        let row = try #require(try connection.query("SELECT \(value)::text AS \"  spaced name \"").first)
        #expect(try row.decode("  spaced name ", as: String.self) == value)
    }

    @Test func statementsWithParametersArePreparedOnceAndReused() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE t (id integer, name text)")
        for id in 1...3 {
            try connection.query("INSERT INTO t VALUES (\(Int32(id)), \("name \(id)"))")
        }
        let name = try connection.query("SELECT name FROM t WHERE id = \(Int32(2))").first?.decode(
            "name", as: String.self)
        #expect(name == "name 2")
        // One INSERT and one SELECT; the statements without parameters were not prepared.
        let statements = try connection.query(
            "SELECT statement FROM pg_prepared_statements ORDER BY statement"
        )
        .map { try $0.decode("statement", as: String.self) }
        #expect(statements == ["INSERT INTO t VALUES ($1, $2)", "SELECT name FROM t WHERE id = $1"])
        // A statement that cannot be prepared fails as it would unprepared, and nothing is kept.
        #expect(
            postgresErrorKind {
                try connection.query("INSERT INTO t VALUES (\(Int32(4)), \(Optional<String>.none)), (1)")
            } == .syntaxOrUsage)
        #expect(try connection.query("SELECT id FROM t").count == 3)
        #expect(
            try connection.query("SELECT count(*) AS n FROM pg_prepared_statements").first?.decode(
                "n", as: Int.self) == 2)
    }

    @Test func preparedStatementsAreBoundedPerConnection() throws {
        let connection = try TestDatabase.connection()
        let limit = PostgresConnection.maximumPreparedStatements
        for n in 0..<(limit + 10) {
            // A different SQL text each time (n is part of the text, not a parameter).
            var sql = PostgresQuery.StringInterpolation(literalCapacity: 24, interpolationCount: 1)
            sql.appendLiteral("SELECT \(n) + ")
            sql.appendInterpolation(Int32(1))
            sql.appendLiteral(" AS v")
            let row = try connection.query(PostgresQuery(stringInterpolation: sql)).first
            #expect(try row?.decode("v", as: Int.self) == n + 1)
        }
        let prepared = try connection.query("SELECT count(*) AS n FROM pg_prepared_statements").first?.decode(
            "n", as: Int.self)
        #expect(prepared == limit)
    }

    @Test func aStatementTheServerForgotIsPreparedAgain() throws {
        let connection = try TestDatabase.connection()
        #expect(try connection.query("SELECT \(Int32(1)) + 1 AS v").first?.decode("v", as: Int.self) == 2)
        // Outside a transaction the statement is prepared again and runs.
        try connection.query("DEALLOCATE ALL")
        #expect(try connection.query("SELECT \(Int32(2)) + 1 AS v").first?.decode("v", as: Int.self) == 3)
        // Inside one, the failed run aborted the transaction: the error stands, and the next
        // run prepares the statement again.
        try connection.query("DEALLOCATE ALL")
        #expect(
            postgresErrorKind {
                try connection.withTransaction { c in _ = try c.query("SELECT \(Int32(3)) + 1 AS v") }
            } != nil)
        #expect(try connection.query("SELECT \(Int32(4)) + 1 AS v").first?.decode("v", as: Int.self) == 5)
    }

    @Test func aTableChangedUnderAPreparedStatementIsReadAgain() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE shape (id integer, name text)")
        try connection.query("INSERT INTO shape VALUES (1, 'one')")
        #expect(
            try connection.query("SELECT * FROM shape WHERE id = \(Int32(1))").first?.decode(
                "name", as: String.self) == "one")
        try connection.query("ALTER TABLE shape ADD COLUMN extra text DEFAULT 'x'")
        let row = try connection.query("SELECT * FROM shape WHERE id = \(Int32(1))").first
        #expect(try row?.decode("extra", as: String.self) == "x")
    }

    @Test func multiStatementScriptsRunThroughUnsafeSQL() throws {
        let connection = try TestDatabase.connection()
        try connection.query(
            PostgresQuery(
                unsafeSQL: "CREATE TABLE a (v integer); INSERT INTO a VALUES (1); INSERT INTO a VALUES (2);"))
        #expect(try connection.query("SELECT v FROM a").count == 2)
        // The extended protocol used for ordinary queries refuses several statements.
        #expect(
            postgresErrorKind { try connection.query("INSERT INTO a VALUES (3); INSERT INTO a VALUES (4)") }
                == .syntaxOrUsage)
    }

    @Test func unreachableServerIsAConnectionFailure() throws {
        let port = try PostgresCluster.freePort()
        #expect(
            postgresErrorKind {
                _ = try PostgresConnection(url: "postgresql://postgres@127.0.0.1:\(port)/postgres")
            } == .connectionFailure)
    }

    @Test func terminatedBackendIsAdminShutdownAndUnusable() throws {
        let url = try TestDatabase.freshDatabaseURL()
        let victim = try PostgresConnection(url: url)
        let admin = try PostgresConnection(url: url)
        try admin.query("SELECT pg_terminate_backend(\(victim.backendPID), \(10_000))")
        let kind = postgresErrorKind { try victim.query("SELECT 1") }
        #expect(kind == .adminShutdown || kind == .connectionFailure)
        #expect(!victim.isUsable)
    }

    /// `pg_ctl stop -m fast` ends every session with `FATAL: terminating connection due to
    /// administrator command`, whatever it is doing. Transactions whose sessions end that way at
    /// any moment (idle between two round trips, or inside a pipeline) must reach callers as an
    /// unavailable database (503), never as a failed statement (500).
    @Test func sessionsEndedAtAnyMomentAreAnUnavailableDatabase() throws {
        let url = try TestDatabase.freshDatabaseURL()
        let killer = try PostgresConnection(url: url)
        let unexpected = Mutex<[String]>([])
        let ended = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let finished = DispatchGroup()
        for _ in 0..<6 {
            finished.enter()
            Thread {
                defer { finished.leave() }
                while !stop.load(ordering: .relaxed) {
                    guard let connection = try? PostgresConnection(url: url) else { continue }
                    while connection.isUsable && !stop.load(ordering: .relaxed) {
                        do {
                            try connection.withTransaction { connection in
                                try connection.query("SELECT \(Int32(1)) AS one")
                                try connection.queue("SELECT \(Int32(2)) AS two")
                                try connection.query("SELECT \(Int32(3)) AS three")
                                try connection.queue("SELECT \(Int32(4)) AS four")
                            }
                        } catch let error as PostgresError {
                            ended.add(1, ordering: .relaxed)
                            if error.kind != .adminShutdown && error.kind != .connectionFailure {
                                unexpected.withLock { $0.append("\(error.kind): \(error.detail)") }
                            }
                        } catch {
                            unexpected.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }.start()
        }
        let deadline = Date().addingTimeInterval(4)
        while Date() < deadline {
            try killer.query(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                """)
            Thread.sleep(forTimeInterval: 0.002)
        }
        stop.store(true, ordering: .relaxed)
        finished.wait()
        #expect(ended.load(ordering: .relaxed) > 0)
        #expect(unexpected.withLock { $0 }.isEmpty, "\(unexpected.withLock { $0 }.prefix(5))")
    }
}
