import Foundation

/// A snapshot of a pool's connections.
public struct PoolStatistics: Sendable, Equatable {
    /// Connections currently open (idle plus in use).
    public let open: Int
    public let inUse: Int
    public let idle: Int
    /// Callers blocked waiting for a connection.
    public let waiting: Int
    public let max: Int
    /// Checkouts since the pool was created that found no free connection and had to wait:
    /// a rising rate means `max_connections` is too small for the load.
    public let waits: Int
}

/// A bounded pool of connections shared by all threads of the process.
///
/// Connections are opened lazily and only while fewer than `maxConnections` exist; a caller
/// that finds none free waits up to `acquireTimeout`, then gets `.poolTimeout`. A connection
/// that failed at connection level is dropped instead of returned, so after a PostgreSQL
/// restart the pool heals by opening fresh connections.
///
/// `@unchecked Sendable`: all mutable state lives in `State` and is touched only while
/// holding `condition`; a connection is used by exactly one caller between acquire and release.
public final class PostgresPool: @unchecked Sendable {
    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        var inUse = 0
        var waiting = 0
        var waits = 0
        var closed = false
    }

    /// The connection URL, for tools that need a dedicated connection (migrations).
    public let url: String
    public let maxConnections: Int
    public let statementTimeout: Duration
    public let acquireTimeout: Duration
    private let condition = NSCondition()
    private var state = State()

    public init(
        url: String, maxConnections: Int = 10, statementTimeout: Duration = .seconds(10),
        acquireTimeout: Duration = .seconds(5)
    ) {
        self.url = url
        self.maxConnections = Swift.max(1, maxConnections)
        self.statementTimeout = statementTimeout
        self.acquireTimeout = acquireTimeout
    }

    /// Lends a connection to `body` and takes it back afterwards, rolled back to an idle state.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection(acquireTimeout: acquireTimeout, body)
    }

    /// Runs `body` in a transaction on a pooled connection (see `PostgresConnection.withTransaction`).
    @discardableResult
    public func withTransaction<T>(
        isolation: IsolationLevel = .readCommitted, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        try withConnection { try $0.withTransaction(isolation: isolation, body) }
    }

    /// Runs `body` in a transaction on a pooled connection, and `whileCommitting` while its
    /// `COMMIT` is under way (see `PostgresConnection.withTransaction(isolation:_:whileCommitting:)`).
    public func withTransaction<T, U>(
        isolation: IsolationLevel = .readCommitted, _ body: (PostgresConnection) throws -> T,
        whileCommitting: (T) throws -> U
    ) throws -> U {
        try withConnection { try $0.withTransaction(isolation: isolation, body, whileCommitting: whileCommitting) }
    }

    @discardableResult
    public func query(_ q: PostgresQuery) throws -> PostgresRows {
        try withConnection { try $0.query(q) }
    }

    @discardableResult
    public func execute(_ q: PostgresQuery) throws -> Int {
        try withConnection { try $0.execute(q) }
    }

    public var statistics: PoolStatistics {
        condition.lock()
        defer { condition.unlock() }
        return PoolStatistics(
            open: state.open, inUse: state.inUse, idle: state.idle.count, waiting: state.waiting,
            max: maxConnections, waits: state.waits)
    }

    /// For readiness probes: `SELECT 1` with short timeouts; false on any failure.
    public func ping() -> Bool {
        let result = try? withConnection(acquireTimeout: .seconds(1)) { connection in
            try connection.withTransaction { connection in
                try connection.query("SET LOCAL statement_timeout = 2000")
                return try connection.query("SELECT 1 AS ok").first?.decode("ok", as: Int.self)
            }
        }
        return result == 1
    }

    /// Closes idle connections and refuses new work; connections in use close when returned.
    public func close() {
        condition.lock()
        state.closed = true
        let idle = state.idle
        state.open -= idle.count
        state.idle = []
        condition.broadcast()
        condition.unlock()
        idle.forEach { $0.close() }
    }

    // MARK: - Acquire and release

    private func withConnection<T>(acquireTimeout: Duration, _ body: (PostgresConnection) throws -> T) throws
        -> T
    {
        let connection = try acquire(timeout: acquireTimeout)
        do {
            let value = try body(connection)
            release(connection)
            return value
        } catch {
            release(connection)
            throw error
        }
    }

    private func acquire(timeout: Duration) throws -> PostgresConnection {
        let deadline = Date().addingTimeInterval(Self.seconds(timeout))
        condition.lock()
        var waited = false
        while true {
            if state.closed {
                condition.unlock()
                throw PostgresError(kind: .connectionFailure, detail: "pool is closed")
            }
            if let connection = state.idle.popLast() {
                state.inUse += 1
                condition.unlock()
                if connection.checkAlive() { return connection }
                // The server closed it while it sat idle: drop it and look again.
                connection.close()
                condition.lock()
                state.inUse -= 1
                state.open -= 1
                continue
            }
            if state.open < maxConnections {
                state.open += 1
                state.inUse += 1
                condition.unlock()
                do {
                    return try PostgresConnection(url: url, statementTimeout: statementTimeout)
                } catch {
                    condition.lock()
                    state.open -= 1
                    state.inUse -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            if !waited {
                waited = true
                state.waits += 1
            }
            state.waiting += 1
            let signalled = condition.wait(until: deadline)
            state.waiting -= 1
            if !signalled && Date() >= deadline {
                condition.unlock()
                throw PostgresError(
                    kind: .poolTimeout,
                    detail: "no connection available within \(timeout) (max \(maxConnections))")
            }
        }
    }

    private func release(_ connection: PostgresConnection) {
        let reusable = connection.resetForReuse()
        condition.lock()
        state.inUse -= 1
        let keep = reusable && !state.closed
        if keep {
            state.idle.append(connection)
        } else {
            state.open -= 1
        }
        condition.signal()
        condition.unlock()
        if !keep { connection.close() }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
