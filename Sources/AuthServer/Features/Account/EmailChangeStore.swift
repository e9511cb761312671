import Foundation
import Postgres

/// A pending change of address, as stored.
struct PendingEmailChange: Sendable, Equatable {
    var id: UUID
    var accountID: UUID
    var newEmail: String
    var newNormalizedEmail: String
    var salt: [UInt8]
    var digest: [UInt8]
    var attempts: Int
    var createdAt: Date
    var expired: Bool
}

/// An undo link's row: what to restore.
struct EmailChangeUndo: Sendable, Equatable {
    var id: UUID
    var accountID: UUID
    var accountEmailID: UUID
    var oldEmail: String
    var oldNormalizedEmail: String
    var oldVerifiedAt: Date?
}

/// What the email change flow reads and writes.
protocol EmailChangeStore {
    /// Runs `body` in one transaction; the store it passes uses only that transaction.
    func transaction<T>(_ body: (any EmailChangeStore) throws -> T) throws -> T
    func lockAccount(_ id: UUID) throws
    /// Whether the session is still live, held so until the transaction ends (`SessionStore.holdLive`).
    func holdSession(_ session: CurrentSession) throws -> Bool
    func account(_ id: UUID) throws -> AccountSummary?
    /// The account's pending change, locked until the transaction ends.
    func pending(accountID: UUID) throws -> PendingEmailChange?
    /// The account whose pending change a link's token belongs to (no lock: the caller locks
    /// the account, then reads the change).
    func pendingAccount(linkDigest: [UInt8]) throws -> UUID?
    /// The stored digest of a pending change's link token.
    func linkDigest(id: UUID) throws -> [UInt8]
    /// Replaces the account's pending change.
    func replacePending(
        id: UUID, accountID: UUID, email: EmailAddress, salt: [UInt8], digest: [UInt8], linkDigest: [UInt8],
        lifetimeSeconds: Int) throws
    func countWrongGuess(id: UUID) throws
    func deletePending(accountID: UUID) throws -> Bool
    /// Ends the account's unexpired pending change (its code and link stop working) but keeps
    /// the row until it is replaced or purged, so that its time still paces the next request.
    func cancelPending(accountID: UUID) throws -> Bool
    /// Counts a code guess against the account's and the new address's budget.
    func spendGuess(accountID: UUID, normalizedEmail: String, settings: EmailVerificationSettings) throws
        -> VerificationGuessBudget.Decision
    /// Whether another account has verified this address.
    func verifiedElsewhere(normalizedEmail: String, besides accountID: UUID) throws -> Bool
    /// The account's sign-in address row (the first): id, address, normalized, verified time.
    func primaryAddress(accountID: UUID) throws -> (
        id: UUID, email: String, normalized: String, verifiedAt: Date?
    )?
    /// Sets the address row to `email` (verified now, or at `verifiedAt`), its unused codes gone;
    /// other accounts holding `email` unverified lose it. Returns those accounts.
    func replaceAddress(
        accountEmailID: UUID, accountID: UUID, email: String, normalized: String, verifiedAt: Date?
    )
        throws -> [UUID]
    func insertUndo(
        id: UUID, accountID: UUID, accountEmailID: UUID,
        old: (email: String, normalized: String, verifiedAt: Date?),
        tokenDigest: [UInt8], lifetimeSeconds: Int) throws
    /// The live undo row of this token, locked; nil when unknown, used or expired.
    func undo(tokenDigest: [UInt8]) throws -> EmailChangeUndo?
    /// Marks this undo row used, and every later one of its account: each later one restores an
    /// address that came after the one this restores. Earlier ones stay usable, so whoever held
    /// an older address can still take it back (an undo of a later change cannot cancel theirs).
    func useUndos(from undo: EmailChangeUndo) throws
    func signOutEverywhere(accountID: UUID) throws -> Int
    func record(_ event: AuditEvent) throws
}

struct PostgresEmailChangeStore: EmailChangeStore {
    let db: any SQLExecutor

    func transaction<T>(_ body: (any EmailChangeStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresEmailChangeStore(db: connection)) }
    }

    func lockAccount(_ id: UUID) throws {
        try AccountStore.lock(accountID: id, on: db)
    }

    func holdSession(_ session: CurrentSession) throws -> Bool {
        try SessionStore.holdLive(session, on: db)
    }

    func account(_ id: UUID) throws -> AccountSummary? {
        try AccountStore.summary(accountID: id, on: db)
    }

    private static let columns = """
        id, account_id, new_email, new_normalized_email, code_salt, code_digest, attempts, created_at,
        expires_at <= now() AS expired
        """

    private static func pending(_ row: PostgresRow) throws -> PendingEmailChange {
        PendingEmailChange(
            id: try row.decode("id"), accountID: try row.decode("account_id"),
            newEmail: try row.decode("new_email"), newNormalizedEmail: try row.decode("new_normalized_email"),
            salt: try row.decode("code_salt"), digest: try row.decode("code_digest"),
            attempts: try row.decode("attempts"), createdAt: try row.decode("created_at"),
            expired: try row.decode("expired"))
    }

    func pending(accountID: UUID) throws -> PendingEmailChange? {
        try db.query(
            "SELECT \(raw: Self.columns) FROM email_changes WHERE account_id = \(accountID) FOR UPDATE"
        ).first.map(Self.pending)
    }

    func pendingAccount(linkDigest: [UInt8]) throws -> UUID? {
        try db.query("SELECT account_id FROM email_changes WHERE link_digest = \(linkDigest)").first?.decode(
            "account_id")
    }

    func linkDigest(id: UUID) throws -> [UInt8] {
        try db.query("SELECT link_digest FROM email_changes WHERE id = \(id)").first?.decode("link_digest")
            ?? []
    }

    func replacePending(
        id: UUID, accountID: UUID, email: EmailAddress, salt: [UInt8], digest: [UInt8], linkDigest: [UInt8],
        lifetimeSeconds: Int
    ) throws {
        try db.query("DELETE FROM email_changes WHERE account_id = \(accountID)")
        try db.query(
            """
            INSERT INTO email_changes (id, account_id, new_email, new_normalized_email, code_salt, code_digest,
                                       link_digest, expires_at)
            VALUES (\(id), \(accountID), \(email.address), \(email.normalized), \(salt), \(digest), \(linkDigest),
                    now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func countWrongGuess(id: UUID) throws {
        try db.query("UPDATE email_changes SET attempts = attempts + 1 WHERE id = \(id)")
    }

    func deletePending(accountID: UUID) throws -> Bool {
        try db.query("DELETE FROM email_changes WHERE account_id = \(accountID)").affectedRows > 0
    }

    func cancelPending(accountID: UUID) throws -> Bool {
        try db.query(
            "UPDATE email_changes SET expires_at = now() WHERE account_id = \(accountID) AND expires_at > now()"
        ).affectedRows > 0
    }

    func spendGuess(accountID: UUID, normalizedEmail: String, settings: EmailVerificationSettings) throws
        -> VerificationGuessBudget.Decision
    {
        try VerificationGuessBudget.spend(
            accountID: accountID, normalizedEmail: normalizedEmail, settings: settings, on: db)
    }

    func verifiedElsewhere(normalizedEmail: String, besides accountID: UUID) throws -> Bool {
        try !db.query(
            """
            SELECT 1 FROM account_emails
            WHERE normalized_email = \(normalizedEmail) AND verified_at IS NOT NULL AND account_id <> \(accountID)
            """
        ).isEmpty
    }

    func primaryAddress(accountID: UUID) throws -> (
        id: UUID, email: String, normalized: String, verifiedAt: Date?
    )? {
        try db.query(
            """
            SELECT id, email, normalized_email, verified_at FROM account_emails
            WHERE account_id = \(accountID) ORDER BY created_at, id LIMIT 1 FOR UPDATE
            """
        ).first.map {
            (
                try $0.decode("id"), try $0.decode("email"), try $0.decode("normalized_email"),
                try $0.decode("verified_at")
            )
        }
    }

    func replaceAddress(
        accountEmailID: UUID, accountID: UUID, email: String, normalized: String, verifiedAt: Date?
    )
        throws -> [UUID]
    {
        let released: [UUID] = try db.query(
            """
            DELETE FROM account_emails
            WHERE normalized_email = \(normalized) AND account_id <> \(accountID) AND verified_at IS NULL
              AND \(verifiedAt)::timestamptz IS NOT NULL
            RETURNING account_id
            """
        ).map { try $0.decode("account_id") }
        try db.query("DELETE FROM email_verification_codes WHERE account_email_id = \(accountEmailID)")
        try db.query(
            """
            UPDATE account_emails SET email = \(email), normalized_email = \(normalized), verified_at = \(verifiedAt)
            WHERE id = \(accountEmailID) AND account_id = \(accountID)
            """)
        return released
    }

    func insertUndo(
        id: UUID, accountID: UUID, accountEmailID: UUID,
        old: (email: String, normalized: String, verifiedAt: Date?),
        tokenDigest: [UInt8], lifetimeSeconds: Int
    ) throws {
        try db.query(
            """
            INSERT INTO email_change_undos (id, account_id, account_email_id, old_email, old_normalized_email,
                                            old_verified_at, token_digest, expires_at)
            VALUES (\(id), \(accountID), \(accountEmailID), \(old.email), \(old.normalized), \(old.verifiedAt),
                    \(tokenDigest), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func undo(tokenDigest: [UInt8]) throws -> EmailChangeUndo? {
        try db.query(
            """
            SELECT id, account_id, account_email_id, old_email, old_normalized_email, old_verified_at
            FROM email_change_undos
            WHERE token_digest = \(tokenDigest) AND used_at IS NULL AND expires_at > now()
            FOR UPDATE
            """
        ).first.map {
            EmailChangeUndo(
                id: try $0.decode("id"), accountID: try $0.decode("account_id"),
                accountEmailID: try $0.decode("account_email_id"), oldEmail: try $0.decode("old_email"),
                oldNormalizedEmail: try $0.decode("old_normalized_email"),
                oldVerifiedAt: try $0.decode("old_verified_at"))
        }
    }

    func useUndos(from undo: EmailChangeUndo) throws {
        try db.query(
            """
            UPDATE email_change_undos SET used_at = now()
            WHERE account_id = \(undo.accountID) AND used_at IS NULL
              AND (created_at, id) >= (SELECT created_at, id FROM email_change_undos WHERE id = \(undo.id))
            """)
    }

    func signOutEverywhere(accountID: UUID) throws -> Int {
        try SignOutEverywhere.run(accountID: accountID, keep: nil, reason: .emailChangeUndone, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }
}
