import Postgres

/// What a store needs to run a statement: the pool (one statement, autocommit) or a
/// connection inside `withTransaction` (several statements that belong together).
protocol SQLExecutor {
    @discardableResult
    func query(_ q: PostgresQuery) throws -> PostgresRows
}

extension PostgresPool: SQLExecutor {}
extension PostgresConnection: SQLExecutor {}
