import Foundation
import Postgres

/// What the account flow (profile, password, sessions) reads and writes.
protocol AccountFlowStore {
    /// Runs `body` in one transaction; the store it passes uses only that transaction.
    func transaction<T>(_ body: (any AccountFlowStore) throws -> T) throws -> T

    func account(_ id: UUID) throws -> AccountSummary?
    /// Takes the account's row lock until the transaction ends (credential changes of one
    /// account run one at a time).
    func lockAccount(_ id: UUID) throws
    /// Whether any of the account's passkeys has signed in at least once.
    func hasUsedPasskey(accountID: UUID) throws -> Bool
    /// The account's linked upstream identities (also ways to sign in).
    func upstreamIdentities(accountID: UUID) throws -> Int
    /// Writes the display name and profile fields; `updated_at` moves when one differs.
    func updateProfile(accountID: UUID, displayName: String, profile: ProfileFields) throws

    func passwordHash(accountID: UUID) throws -> String?
    /// The password hash, its row locked until the transaction ends; nil without a password.
    func lockPassword(accountID: UUID) throws -> String?
    /// Whether the session is still live, held so until the transaction ends (`SessionStore.holdLive`).
    func holdSession(_ session: CurrentSession) throws -> Bool
    func setPassword(accountID: UUID, hash: String) throws
    /// False when the account had no password.
    func deletePassword(accountID: UUID) throws -> Bool
    /// Ends every session of the account but `keep` and revokes all of its tokens; returns how
    /// many sessions ended (see `SignOutEverywhere`).
    func signOutEverywhere(accountID: UUID, keep: UUID, reason: SignOutEverywhere.Reason) throws -> Int

    /// The account's live sessions, most recently used first.
    func sessions(accountID: UUID) throws -> [SessionSummary]
    /// False when the account has no live session `id`.
    func endSession(id: UUID, accountID: UUID) throws -> Bool

    func record(_ event: AuditEvent) throws
}

struct PostgresAccountFlowStore: AccountFlowStore {
    let db: any SQLExecutor
    /// The browser sessions; their list and their end are single statements on the pool.
    let sessions: SessionStore

    func transaction<T>(_ body: (any AccountFlowStore) throws -> T) throws -> T {
        try db.transaction { connection in
            try body(PostgresAccountFlowStore(db: connection, sessions: sessions))
        }
    }

    func account(_ id: UUID) throws -> AccountSummary? {
        try AccountStore.summary(accountID: id, on: db)
    }

    func lockAccount(_ id: UUID) throws {
        try AccountStore.lock(accountID: id, on: db)
    }

    func hasUsedPasskey(accountID: UUID) throws -> Bool {
        try PasskeyStore.hasUsedPasskey(accountID: accountID, on: db)
    }

    func upstreamIdentities(accountID: UUID) throws -> Int {
        try UpstreamIdentityStore.count(accountID: accountID, on: db)
    }

    func updateProfile(accountID: UUID, displayName: String, profile: ProfileFields) throws {
        try AccountStore.updateProfile(
            accountID: accountID, displayName: displayName, profile: profile, on: db)
    }

    func passwordHash(accountID: UUID) throws -> String? {
        try AccountStore.passwordHash(accountID: accountID, on: db)
    }

    func lockPassword(accountID: UUID) throws -> String? {
        try db.query(
            "SELECT password_hash FROM password_credentials WHERE account_id = \(accountID) FOR UPDATE"
        ).first?.decode("password_hash")
    }

    func holdSession(_ session: CurrentSession) throws -> Bool {
        try SessionStore.holdLive(session, on: db)
    }

    func setPassword(accountID: UUID, hash: String) throws {
        try AccountStore.setPassword(accountID: accountID, hash: hash, on: db)
    }

    func deletePassword(accountID: UUID) throws -> Bool {
        try AccountStore.deletePassword(accountID: accountID, on: db)
    }

    func signOutEverywhere(accountID: UUID, keep: UUID, reason: SignOutEverywhere.Reason) throws -> Int {
        try SignOutEverywhere.run(accountID: accountID, keep: keep, reason: reason, on: db)
    }

    func sessions(accountID: UUID) throws -> [SessionSummary] {
        try sessions.list(accountID: accountID)
    }

    func endSession(id: UUID, accountID: UUID) throws -> Bool {
        try sessions.revoke(id: id, accountID: accountID)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }
}
