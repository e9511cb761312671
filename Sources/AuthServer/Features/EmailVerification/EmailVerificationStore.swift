import Crypto
import Foundation
import Postgres

/// The address an account signs in with (its first), and whether it is verified.
struct AccountEmail: Sendable, Equatable {
    var id: UUID
    var accountID: UUID
    var email: String
    var verifiedAt: Date?
}

/// The code a guess is aimed at: it names the account and the address whose budget the guess
/// spends.
struct VerificationTarget: Sendable, Equatable {
    var codeID: UUID
    var accountID: UUID
    var normalizedEmail: String
}

/// A verification code as a guess at it is checked, with the address it would verify.
struct VerificationCodeRecord: Sendable, Equatable {
    var id: UUID
    var salt: [UInt8]
    var digest: [UInt8]
    var attempts: Int
    var consumed: Bool
    var expired: Bool
    var email: AccountEmail
}

/// What `EmailVerificationFlow` reads and writes: `email_verification_codes`,
/// `account_emails.verified_at` and the guess counts.
protocol EmailVerificationStore {
    /// Runs `body` in one transaction; the store it is given uses only that transaction.
    func transaction<T>(_ body: (any EmailVerificationStore) throws -> T) throws -> T

    /// The account's first address; with `lock`, its row stays locked to the transaction's end.
    func primaryEmail(accountID: UUID, lock: Bool) throws -> AccountEmail?

    // MARK: Issuing

    /// Seconds since the address's newest code was issued; nil when it has none.
    func lastCodeAge(accountEmailID: UUID) throws -> Double?
    /// Replaces the address's unused codes with this one (only digests are stored).
    func replaceCode(
        id: UUID, accountEmailID: UUID, salt: [UInt8], digest: [UInt8], linkDigest: [UInt8],
        lifetimeSeconds: Int
    ) throws
    /// The stored address of another account that verified the same address, if one did.
    func verifiedHolder(accountEmailID: UUID, besides accountID: UUID) throws -> String?
    /// The id of the address's live code, for the account page's form.
    func currentCodeID(accountEmailID: UUID) throws -> UUID?

    // MARK: Checking

    /// The code with this id. Read without a lock: it only names whose budget a guess spends.
    func target(codeID: UUID) throws -> VerificationTarget?
    /// The address's newest code.
    func newestTarget(accountEmailID: UUID) throws -> VerificationTarget?
    /// The code a link token belongs to.
    func codeID(linkDigest: [UInt8]) throws -> UUID?
    /// Counts one guess for the account and the address atomically and decides.
    func spendGuess(accountID: UUID, normalizedEmail: String, settings: EmailVerificationSettings) throws
        -> VerificationGuessBudget.Decision
    /// Locks the rows of every account holding the address, always in the same order and
    /// before the code, so that two holders verifying at once cannot both win.
    func lockHolders(normalizedEmail: String) throws
    /// The code, locked, with its address.
    func lockedCode(id: UUID) throws -> VerificationCodeRecord?
    func countWrongGuess(codeID: UUID) throws
    /// Whether another account has verified the address.
    func verifiedElsewhere(normalizedEmail: String, besides accountID: UUID) throws -> Bool
    func consumeCode(id: UUID) throws
    /// Marks the address verified (keeping an earlier time); when it is verified.
    func markVerified(accountEmailID: UUID) throws -> Date?
    /// Removes the address from every other account holding it; those accounts.
    func release(normalizedEmail: String, keeping accountEmailID: UUID) throws -> [UUID]
    /// Whether the link's code was used and its address is verified (a link opened twice).
    func isConsumedAndVerified(linkDigest: [UInt8]) throws -> Bool

    func record(_ event: AuditEvent) throws
}

/// `EmailVerificationStore` in PostgreSQL.
struct PostgresEmailVerificationStore: EmailVerificationStore {
    let db: any SQLExecutor

    private static let emailColumns = PostgresQuery.Fragment("id, account_id, email, verified_at")
    private static let targetColumns = PostgresQuery.Fragment("c.id, e.account_id, e.normalized_email")

    func transaction<T>(_ body: (any EmailVerificationStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresEmailVerificationStore(db: connection)) }
    }

    func primaryEmail(accountID: UUID, lock: Bool) throws -> AccountEmail? {
        let rows =
            lock
            ? try db.query(
                """
                SELECT \(Self.emailColumns) FROM account_emails WHERE account_id = \(accountID)
                ORDER BY created_at, id LIMIT 1 FOR UPDATE
                """)
            : try db.query(
                """
                SELECT \(Self.emailColumns) FROM account_emails WHERE account_id = \(accountID)
                ORDER BY created_at, id LIMIT 1
                """)
        guard let row = rows.first else { return nil }
        return AccountEmail(
            id: try row.decode("id"), accountID: try row.decode("account_id"), email: try row.decode("email"),
            verifiedAt: try row.decode("verified_at", as: Date?.self))
    }

    func lastCodeAge(accountEmailID: UUID) throws -> Double? {
        try db.query(
            """
            SELECT extract(epoch FROM now() - max(created_at))::float8 AS age
            FROM email_verification_codes WHERE account_email_id = \(accountEmailID)
            """
        ).first?.decode("age", as: Double?.self)
    }

    func replaceCode(
        id: UUID, accountEmailID: UUID, salt: [UInt8], digest: [UInt8], linkDigest: [UInt8],
        lifetimeSeconds: Int
    ) throws {
        try db.query(
            "DELETE FROM email_verification_codes WHERE account_email_id = \(accountEmailID) AND consumed_at IS NULL"
        )
        try db.query(
            """
            INSERT INTO email_verification_codes
                (id, account_email_id, code_salt, code_digest, link_digest, expires_at)
            VALUES (\(id), \(accountEmailID), \(salt), \(digest), \(linkDigest),
                    now() + make_interval(secs => \(lifetimeSeconds)))
            """)
    }

    func verifiedHolder(accountEmailID: UUID, besides accountID: UUID) throws -> String? {
        try db.query(
            """
            SELECT h.email FROM account_emails h JOIN account_emails e ON e.normalized_email = h.normalized_email
            WHERE e.id = \(accountEmailID) AND h.verified_at IS NOT NULL AND h.account_id <> \(accountID)
            """
        ).first?.decode("email")
    }

    func currentCodeID(accountEmailID: UUID) throws -> UUID? {
        try db.query(
            """
            SELECT id FROM email_verification_codes
            WHERE account_email_id = \(accountEmailID) AND consumed_at IS NULL
            ORDER BY created_at DESC LIMIT 1
            """
        ).first?.decode("id")
    }

    private static func target(_ row: PostgresRow) throws -> VerificationTarget {
        VerificationTarget(
            codeID: try row.decode("id"), accountID: try row.decode("account_id"),
            normalizedEmail: try row.decode("normalized_email"))
    }

    func target(codeID: UUID) throws -> VerificationTarget? {
        try db.query(
            """
            SELECT \(Self.targetColumns)
            FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
            WHERE c.id = \(codeID)
            """
        ).first.map(Self.target)
    }

    func newestTarget(accountEmailID: UUID) throws -> VerificationTarget? {
        try db.query(
            """
            SELECT \(Self.targetColumns)
            FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
            WHERE c.account_email_id = \(accountEmailID)
            ORDER BY c.created_at DESC LIMIT 1
            """
        ).first.map(Self.target)
    }

    func codeID(linkDigest: [UInt8]) throws -> UUID? {
        try db.query("SELECT id FROM email_verification_codes WHERE link_digest = \(linkDigest)").first?
            .decode(
                "id")
    }

    func spendGuess(accountID: UUID, normalizedEmail: String, settings: EmailVerificationSettings) throws
        -> VerificationGuessBudget.Decision
    {
        try VerificationGuessBudget.spend(
            accountID: accountID, normalizedEmail: normalizedEmail, settings: settings, on: db)
    }

    func lockHolders(normalizedEmail: String) throws {
        try db.query(
            "SELECT id FROM account_emails WHERE normalized_email = \(normalizedEmail) ORDER BY id FOR UPDATE"
        )
    }

    func lockedCode(id: UUID) throws -> VerificationCodeRecord? {
        guard
            let row = try db.query(
                """
                SELECT c.id, c.code_salt, c.code_digest, c.attempts, c.consumed_at, c.expires_at <= now() AS expired,
                       e.id AS email_id, e.account_id, e.email, e.verified_at
                FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
                WHERE c.id = \(id) FOR UPDATE OF c
                """
            ).first
        else { return nil }
        return VerificationCodeRecord(
            id: try row.decode("id"), salt: try row.decode("code_salt"),
            digest: try row.decode("code_digest"),
            attempts: try row.decode("attempts"),
            consumed: try row.decode("consumed_at", as: Date?.self) != nil,
            expired: try row.decode("expired"),
            email: AccountEmail(
                id: try row.decode("email_id"), accountID: try row.decode("account_id"),
                email: try row.decode("email"), verifiedAt: try row.decode("verified_at", as: Date?.self)))
    }

    func countWrongGuess(codeID: UUID) throws {
        try db.query("UPDATE email_verification_codes SET attempts = attempts + 1 WHERE id = \(codeID)")
    }

    func verifiedElsewhere(normalizedEmail: String, besides accountID: UUID) throws -> Bool {
        try !db.query(
            """
            SELECT 1 FROM account_emails WHERE normalized_email = \(normalizedEmail)
            AND verified_at IS NOT NULL AND account_id <> \(accountID)
            """
        ).isEmpty
    }

    func consumeCode(id: UUID) throws {
        try db.query("UPDATE email_verification_codes SET consumed_at = now() WHERE id = \(id)")
    }

    func markVerified(accountEmailID: UUID) throws -> Date? {
        try db.query(
            """
            UPDATE account_emails SET verified_at = coalesce(verified_at, now()) WHERE id = \(accountEmailID)
            RETURNING verified_at
            """
        ).first?.decode("verified_at")
    }

    func release(normalizedEmail: String, keeping accountEmailID: UUID) throws -> [UUID] {
        try db.query(
            """
            DELETE FROM account_emails WHERE normalized_email = \(normalizedEmail) AND id <> \(accountEmailID)
            RETURNING account_id
            """
        ).map { try $0.decode("account_id", as: UUID.self) }
    }

    func isConsumedAndVerified(linkDigest: [UInt8]) throws -> Bool {
        try !db.query(
            """
            SELECT 1 FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
            WHERE c.link_digest = \(linkDigest) AND c.consumed_at IS NOT NULL
              AND e.verified_at IS NOT NULL
            """
        ).isEmpty
    }

    func record(_ event: AuditEvent) throws { try AuditLog.record(event, on: db) }
}
