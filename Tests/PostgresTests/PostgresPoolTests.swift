import Foundation
import Synchronization
import Testing

@testable import Postgres

@Suite struct PostgresPoolTests {
    @Test func poolNeverOpensMoreThanMaxConnections() throws {
        let pool = try TestDatabase.pool(maxConnections: 2)
        let highest = Mutex(0)
        let failures = Mutex(0)
        runConcurrently(6) { _ in
            do {
                try pool.withConnection { connection in
                    let inUse = pool.statistics.inUse
                    highest.withLock { $0 = max($0, inUse) }
                    try connection.query("SELECT pg_sleep(0.05)")
                }
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(highest.withLock { $0 } <= 2)
        let statistics = pool.statistics
        #expect(statistics.open <= 2)
        #expect(statistics.inUse == 0)
        #expect(statistics.waiting == 0)
        #expect(statistics.max == 2)
        // The server agrees: no more than two sessions ever reached this database.
        let sessions = try pool.query(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()"
        ).first?.decode("n", as: Int.self)
        #expect((sessions ?? 99) <= 2)
        pool.close()
    }

    @Test func waitingTooLongThrowsPoolTimeout() throws {
        let pool = try TestDatabase.pool(maxConnections: 1, acquireTimeout: .milliseconds(200))
        let acquired = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            _ = try? pool.withConnection { _ in
                acquired.signal()
                release.wait()
            }
        }
        holder.start()
        acquired.wait()
        #expect(postgresErrorKind { try pool.query("SELECT 1") } == .poolTimeout)
        release.signal()
        // Once the holder is done, the same connection serves the next caller.
        let value = try pool.withConnection {
            try $0.query("SELECT 1 AS one").first?.decode("one", as: Int.self)
        }
        #expect(value == 1)
        #expect(pool.statistics.open == 1)
    }

    @Test func brokenConnectionsAreDiscardedNotReused() throws {
        let pool = try TestDatabase.pool(maxConnections: 1)
        let pid = try pool.withConnection { $0.backendPID }
        // The two-argument form waits until the backend has really exited.
        try PostgresConnection(url: pool.url).query("SELECT pg_terminate_backend(\(pid), \(10_000))")
        // The idle connection's death is noticed when it is next handed out: a new one is made.
        let newPID = try pool.withConnection { $0.backendPID }
        #expect(newPID != pid)

        // A connection that dies while in use is dropped on return.
        let kind = postgresErrorKind {
            try pool.withConnection { connection in
                _ = try connection.query("SELECT pg_terminate_backend(pg_backend_pid())")
            }
        }
        #expect(kind == .adminShutdown || kind == .connectionFailure)
        #expect(pool.statistics.open == 0)
        #expect(try pool.query("SELECT 1 AS one").count == 1)
    }

    @Test func closedPoolRefusesWork() throws {
        let pool = try TestDatabase.pool()
        try pool.execute("SELECT 1")
        #expect(pool.statistics.idle == 1)
        pool.close()
        #expect(pool.statistics.open == 0)
        #expect(postgresErrorKind { try pool.query("SELECT 1") } == .connectionFailure)
        #expect(!pool.ping())
    }

    @Test func connectionReturnedInsideATransactionIsRolledBack() throws {
        let pool = try TestDatabase.pool(maxConnections: 1)
        try pool.execute("CREATE TABLE t (v integer)")
        try pool.withConnection { connection in
            try connection.query(PostgresQuery(unsafeSQL: "BEGIN"))
            try connection.execute("INSERT INTO t VALUES (1)")
        }
        let leftovers = try pool.withConnection { connection in
            #expect(!connection.isInTransaction)
            return try connection.query("SELECT v FROM t").count
        }
        #expect(leftovers == 0)
    }

    @Test func poolTransactionsCommitAndRollBack() throws {
        struct Refused: Error {}
        let pool = try TestDatabase.pool()
        try pool.execute("CREATE TABLE t (v integer)")
        try pool.withTransaction { try $0.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: Refused.self) {
            try pool.withTransaction(isolation: .repeatableRead) { connection in
                try connection.execute("INSERT INTO t VALUES (2)")
                throw Refused()
            }
        }
        #expect(try pool.query("SELECT v FROM t").map { try $0.decode("v", as: Int.self) } == [1])
    }

    @Test func statementTimeoutAppliesToPooledConnections() throws {
        let pool = try TestDatabase.pool(maxConnections: 1, statementTimeout: .milliseconds(200))
        #expect(postgresErrorKind { try pool.query("SELECT pg_sleep(30)") } == .queryCanceled)
        #expect(try pool.query("SELECT 1").count == 1)
        #expect(pool.ping())
    }

    @Test func poolRecoversAfterTheServerRestarts() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pg-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        chmod(root.path, 0o711)
        defer { try? FileManager.default.removeItem(at: root) }
        let dataDirectory = root.appendingPathComponent("data")
        let cluster = try PostgresCluster.start(dataDirectory: dataDirectory)
        defer { try? cluster.stop() }

        let pool = PostgresPool(url: cluster.url, maxConnections: 2, acquireTimeout: .seconds(30))
        try pool.execute("CREATE TABLE kept (v text)")
        try pool.execute("INSERT INTO kept VALUES (\("before restart"))")
        #expect(pool.ping())

        try cluster.restart()
        #expect(try pool.query("SELECT v FROM kept").first?.decode("v", as: String.self) == "before restart")
        #expect(pool.ping())

        // While the server is down the pool reports it; afterwards it heals by itself.
        try cluster.stop()
        #expect(!pool.ping())
        #expect(postgresErrorKind { try pool.query("SELECT 1") } == .connectionFailure)
        let again = try PostgresCluster.start(dataDirectory: dataDirectory, port: cluster.port)
        defer { try? again.stop() }
        #expect(try pool.query("SELECT v FROM kept").count == 1)
        pool.close()
    }
}
