import Foundation
import Postgres

/// What the data export reads: the account's own rows, each list in one statement.
protocol DataExportStore {
    /// Runs `body` in one read-only snapshot, so the sections agree with each other.
    func transaction<T>(_ body: (any DataExportStore) throws -> T) throws -> T
    func account(_ id: UUID) throws -> AccountSummary?
    func emails(accountID: UUID) throws -> [DataExport.Email]
    func passkeys(accountID: UUID) throws -> [PasskeyRecord]
    func linkedIdentities(accountID: UUID) throws -> [DataExport.LinkedIdentity]
    func consents(accountID: UUID) throws -> [OAuthStore.ConsentSummary]
    func sessions(accountID: UUID) throws -> [SessionSummary]
    /// The account's audit events since `since`, newest first, at most `limit`.
    func auditEvents(accountID: UUID, since: Date, limit: Int) throws -> [AuditRecord]
}

struct PostgresDataExportStore: DataExportStore {
    let db: any SQLExecutor

    func transaction<T>(_ body: (any DataExportStore) throws -> T) throws -> T {
        try db.transaction { connection in
            try connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try body(PostgresDataExportStore(db: connection))
        }
    }

    func account(_ id: UUID) throws -> AccountSummary? {
        try AccountStore.summary(accountID: id, on: db)
    }

    func emails(accountID: UUID) throws -> [DataExport.Email] {
        try db.query(
            """
            SELECT email, verified_at, created_at FROM account_emails
            WHERE account_id = \(accountID) ORDER BY created_at, id
            """
        ).map {
            DataExport.Email(
                email: try $0.decode("email"), verifiedAt: try $0.decode("verified_at"),
                addedAt: try $0.decode("created_at"))
        }
    }

    func passkeys(accountID: UUID) throws -> [PasskeyRecord] {
        try PasskeyStore.list(accountID: accountID, on: db)
    }

    func linkedIdentities(accountID: UUID) throws -> [DataExport.LinkedIdentity] {
        try UpstreamIdentityStore.list(accountID: accountID, on: db).map {
            DataExport.LinkedIdentity(
                provider: $0.provider, email: $0.email, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt)
        }
    }

    func consents(accountID: UUID) throws -> [OAuthStore.ConsentSummary] {
        try OAuthStore.consents(accountID: accountID, on: db)
    }

    func sessions(accountID: UUID) throws -> [SessionSummary] {
        try SessionStore.list(accountID: accountID, on: db)
    }

    func auditEvents(accountID: UUID, since: Date, limit: Int) throws -> [AuditRecord] {
        try db.query(
            """
            SELECT id, occurred_at, event, actor, account_id, client_id, client_address, detail::text AS detail
            FROM audit_events
            WHERE account_id = \(accountID) AND occurred_at >= \(since)
            ORDER BY occurred_at DESC, id DESC
            LIMIT \(limit)
            """
        ).map { row in
            AuditRecord(
                id: try row.decode("id"), occurredAt: try row.decode("occurred_at"),
                event: try row.decode("event"), actor: try row.decode("actor"),
                accountID: try row.decode("account_id"), clientID: try row.decode("client_id"),
                clientAddress: try row.decode("client_address"),
                detail: AuditQuery.decodeDetail(try row.decode("detail")))
        }
    }
}
