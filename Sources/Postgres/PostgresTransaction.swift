import CLibPQ

/// The isolation level a transaction starts with.
public enum IsolationLevel: Sendable {
    case readCommitted
    case repeatableRead
    /// Retry the whole transaction on `.serializationFailure`.
    case serializable

    var sql: String {
        switch self {
        case .readCommitted: "READ COMMITTED"
        case .repeatableRead: "REPEATABLE READ"
        case .serializable: "SERIALIZABLE"
        }
    }
}

/// A transaction body failed and the rollback that followed failed too.
///
/// Both are kept: the body's error explains what went wrong, the rollback's error why the
/// connection is now in doubt.
public struct PostgresRollbackError: Error, CustomStringConvertible {
    public let bodyError: any Error
    public let rollbackError: PostgresError

    public var description: String { "transaction failed and could not be rolled back" }
}

extension PostgresConnection {
    /// Runs `body` inside `BEGIN … COMMIT`.
    ///
    /// `BEGIN` is sent with the body's first statement and `COMMIT` with what the body queued
    /// last (`queue(_:)`), each in one round trip; a body that ran nothing sends nothing.
    ///
    /// If `body` throws, the transaction is rolled back and the body's error rethrown (or a
    /// `PostgresRollbackError` carrying both when the rollback fails as well). A body that
    /// swallowed a statement error leaves the transaction aborted: that is rolled back and
    /// reported instead of a silent `COMMIT` that PostgreSQL would turn into a rollback.
    @discardableResult
    public func withTransaction<T>(
        isolation: IsolationLevel = .readCommitted, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        try withTransaction(isolation: isolation, body, whileCommitting: { $0 })
    }

    /// Like `withTransaction(isolation:_:)`, and runs `whileCommitting` on the body's value
    /// after the `COMMIT` is sent and before its answer is read, so that work needing no
    /// connection (signing what the transaction recorded) runs while PostgreSQL commits and
    /// flushes its WAL. Its value is returned only once the commit succeeded: when the commit
    /// fails, that error is thrown and the value dropped. An error of `whileCommitting` is
    /// thrown after the commit's answer was read (the transaction stays committed).
    public func withTransaction<T, U>(
        isolation: IsolationLevel = .readCommitted, _ body: (PostgresConnection) throws -> T,
        whileCommitting: (T) throws -> U
    ) throws -> U {
        guard !isInTransaction else {
            throw PostgresError(
                kind: .syntaxOrUsage, detail: "withTransaction called inside an open transaction")
        }
        queueBegin(isolation)
        let value: T
        do {
            value = try body(self)
        } catch {
            try rollback(after: error)
            throw error
        }
        if transactionStatus == PQTRANS_INERROR {
            let error = PostgresError(
                kind: .other, detail: "transaction aborted by a statement error that the body did not rethrow"
            )
            try rollback(after: error)
            throw error
        }
        // A body that ran and queued nothing opened nothing on the server.
        if beginIsQueued && queuedCount == 1 {
            _ = dropQueued()
            return try whileCommitting(value)
        }
        let outcome: Result<U, any Error>
        do {
            let sent = try sendCommit()
            outcome = Result { try whileCommitting(value) }
            try readPipeline(sent)
        } catch {
            // A queued statement failed in the COMMIT's pipeline, or was refused before it was
            // sent: the transaction is still open, and goes.
            if isInTransaction { try rollback(after: error) }
            throw error
        }
        return try outcome.get()
    }

    private func rollback(after error: any Error) throws {
        // Nothing sent: no transaction was opened on the server.
        if dropQueued() { return }
        // A lost connection has no transaction left to roll back.
        guard isUsable else { return }
        do {
            try query(PostgresQuery(unsafeSQL: "ROLLBACK"))
        } catch let rollbackError as PostgresError {
            throw PostgresRollbackError(bodyError: error, rollbackError: rollbackError)
        }
    }

    /// Returns the connection to a clean idle state for reuse; false when it must be discarded.
    func resetForReuse() -> Bool {
        _ = dropQueued()
        guard isUsable else { return false }
        if transactionStatus == PQTRANS_IDLE { return true }
        guard (try? query(PostgresQuery(unsafeSQL: "ROLLBACK"))) != nil else { return false }
        return isUsable && transactionStatus == PQTRANS_IDLE
    }
}
