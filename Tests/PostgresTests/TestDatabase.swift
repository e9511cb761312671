import Foundation
import Postgres

/// One temporary PostgreSQL cluster per test process, started on first use and stopped at exit;
/// every test gets its own database in it, so tests stay independent when run in parallel.
enum TestDatabase {
    static let cluster: Result<PostgresCluster, any Error> = {
        let result = Result { try PostgresCluster.temporary() }
        atexit {
            if case .success(let cluster) = TestDatabase.cluster { try? cluster.stop() }
        }
        return result
    }()

    /// Creates a fresh, empty database and returns its URL.
    static func freshDatabaseURL() throws -> String {
        let cluster = try cluster.get()
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try cluster.createDatabase(name)
        return cluster.url(database: name)
    }

    static func pool(
        maxConnections: Int = 4, statementTimeout: Duration = .seconds(30),
        acquireTimeout: Duration = .seconds(30)
    ) throws -> PostgresPool {
        PostgresPool(
            url: try freshDatabaseURL(), maxConnections: maxConnections, statementTimeout: statementTimeout,
            acquireTimeout: acquireTimeout)
    }

    static func connection(statementTimeout: Duration? = nil) throws -> PostgresConnection {
        try PostgresConnection(url: try freshDatabaseURL(), statementTimeout: statementTimeout)
    }
}

/// Runs `body` on `count` dedicated threads at once and waits for all of them.
func runConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}

/// The kind of a thrown `PostgresError`, or nil when nothing (or something else) was thrown.
func postgresErrorKind(_ body: () throws -> Void) -> PostgresError.Kind? {
    do {
        try body()
        return nil
    } catch let error as PostgresError {
        return error.kind
    } catch {
        return nil
    }
}
