import Postgres

/// What a store needs to run statements: the pool (one statement, autocommit) or a
/// connection inside a transaction (several statements that belong together).
protocol SQLExecutor {
    @discardableResult
    func query(_ q: PostgresQuery) throws -> PostgresRows

    /// A write whose outcome the caller does not read: inside a transaction it is sent with
    /// the next statement (or the `COMMIT`) in one round trip, and its error is thrown there
    /// (`PostgresConnection.queue`); elsewhere it runs at once.
    func queue(_ q: PostgresQuery) throws

    /// Runs `body` in one transaction on one connection and passes that connection, the only
    /// one `body` may use: the pool opens a transaction on a connection it lends; a connection
    /// already inside a transaction joins it (so a store method can be called both alone and
    /// from a flow's larger transaction).
    func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T
}

extension PostgresPool: SQLExecutor {
    func queue(_ q: PostgresQuery) throws { try query(q) }

    func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withTransaction(body)
    }
}

extension PostgresConnection: SQLExecutor {
    func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if isInTransaction { return try body(self) }
        return try withTransaction(body)
    }
}
