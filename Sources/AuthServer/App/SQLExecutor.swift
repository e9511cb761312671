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

    /// Like `transaction(_:)`, and runs `whileCommitting` on the body's value while the
    /// `COMMIT` is under way; its value comes back only if the commit succeeded. Joined to a
    /// larger transaction, it runs after `body`, and that transaction's commit decides.
    func transaction<T, U>(_ body: (PostgresConnection) throws -> T, whileCommitting: (T) throws -> U) throws -> U
}

extension PostgresPool: SQLExecutor {
    func queue(_ q: PostgresQuery) throws { try query(q) }

    func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withTransaction(body)
    }

    func transaction<T, U>(_ body: (PostgresConnection) throws -> T, whileCommitting: (T) throws -> U) throws -> U {
        try withTransaction(body, whileCommitting: whileCommitting)
    }
}

extension PostgresConnection: SQLExecutor {
    func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if isInTransaction { return try body(self) }
        return try withTransaction(body)
    }

    func transaction<T, U>(_ body: (PostgresConnection) throws -> T, whileCommitting: (T) throws -> U) throws -> U {
        if isInTransaction { return try whileCommitting(body(self)) }
        return try withTransaction(body, whileCommitting: whileCommitting)
    }
}
