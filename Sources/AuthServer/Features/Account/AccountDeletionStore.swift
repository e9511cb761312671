import Foundation
import Postgres

/// What the account holder's own deletion reads and writes.
protocol AccountDeletionStore {
    /// Runs `body` in one transaction; the store it passes uses only that transaction.
    func transaction<T>(_ body: (any AccountDeletionStore) throws -> T) throws -> T
    func account(_ id: UUID) throws -> AccountSummary?
    /// `AccountDeletion.run`: nil when the account is gone already or `session` has ended.
    func delete(session: CurrentSession, anonymousID: UUID, clients: [ClientMetadata]) throws -> AccountDeletion
        .Outcome?
    func record(_ event: AuditEvent) throws
}

struct PostgresAccountDeletionStore: AccountDeletionStore {
    let db: any SQLExecutor

    func transaction<T>(_ body: (any AccountDeletionStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresAccountDeletionStore(db: connection)) }
    }

    func account(_ id: UUID) throws -> AccountSummary? {
        try AccountStore.summary(accountID: id, on: db)
    }

    func delete(session: CurrentSession, anonymousID: UUID, clients: [ClientMetadata]) throws -> AccountDeletion
        .Outcome?
    {
        try AccountDeletion.run(
            accountID: session.accountID, anonymousID: anonymousID, session: session, clients: clients, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }
}
