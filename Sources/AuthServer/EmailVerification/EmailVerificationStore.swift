import Crypto
import Foundation
import Postgres

/// SQL for `email_verification_codes` and `account_emails.verified_at`.
enum EmailVerificationStore {
    /// The address an account signs in with (its first), and whether it is verified.
    struct AccountEmail: Sendable, Equatable {
        var id: UUID
        var accountID: UUID
        var email: String
        var verifiedAt: Date?
    }

    /// What a guess at a code came to.
    enum Outcome: Sendable, Equatable {
        case verified(AccountEmail)
        /// Wrong code, no code, or a code already used.
        case invalid
        /// Past its lifetime or out of attempts: a new code is needed.
        case expired
    }

    enum IssueResult: Sendable, Equatable {
        case issued(id: UUID, code: String, email: AccountEmail)
        case alreadyVerified
        case throttled(retryAfter: Int)
        case noEmail
    }

    static func primaryEmail(accountID: UUID, lock: Bool = false, on db: some SQLExecutor) throws
        -> AccountEmail?
    {
        let rows =
            lock
            ? try db.query(
                """
                SELECT id, account_id, email, verified_at FROM account_emails WHERE account_id = \(accountID)
                ORDER BY created_at, id LIMIT 1 FOR UPDATE
                """)
            : try db.query(
                """
                SELECT id, account_id, email, verified_at FROM account_emails WHERE account_id = \(accountID)
                ORDER BY created_at, id LIMIT 1
                """)
        guard let row = rows.first else { return nil }
        return AccountEmail(
            id: try row.decode("id"), accountID: try row.decode("account_id"), email: try row.decode("email"),
            verifiedAt: try row.decode("verified_at", as: Date?.self))
    }

    /// A fresh code for the account's address, replacing any unused one. With
    /// `minimumInterval`, refuses when the previous code is younger than that (resend throttle).
    static func issue(
        accountID: UUID, lifetimeSeconds: Int, minimumInterval: Int?, on connection: PostgresConnection
    ) throws -> IssueResult {
        guard let email = try primaryEmail(accountID: accountID, lock: true, on: connection) else {
            return .noEmail
        }
        if email.verifiedAt != nil { return .alreadyVerified }
        if let minimumInterval {
            let age: Double? = try connection.query(
                """
                SELECT extract(epoch FROM now() - max(created_at))::float8 AS age
                FROM email_verification_codes WHERE account_email_id = \(email.id)
                """
            ).first?.decode("age", as: Double?.self)
            if let age, age < Double(minimumInterval) {
                return .throttled(retryAfter: max(1, minimumInterval - Int(age)))
            }
        }
        try connection.query(
            "DELETE FROM email_verification_codes WHERE account_email_id = \(email.id) AND consumed_at IS NULL"
        )
        let id = UUID.random()
        let code = VerificationCode.generate()
        let salt = VerificationCode.newSalt()
        let digest = VerificationCode.digest(salt: salt, code: code)
        try connection.query(
            """
            INSERT INTO email_verification_codes (id, account_email_id, code_salt, code_digest, expires_at)
            VALUES (\(id), \(email.id), \(salt), \(digest), now() + make_interval(secs => \(lifetimeSeconds)))
            """)
        return .issued(id: id, code: code, email: email)
    }

    /// The id of the account's live code, for the account page's form.
    static func currentCodeID(accountEmailID: UUID, on db: some SQLExecutor) throws -> UUID? {
        try db.query(
            """
            SELECT id FROM email_verification_codes
            WHERE account_email_id = \(accountEmailID) AND consumed_at IS NULL
            ORDER BY created_at DESC LIMIT 1
            """
        ).first?.decode("id")
    }

    /// Checks `candidate` against a code, counting the attempt, inside the caller's
    /// transaction. The code is chosen by its id (the link) or as the newest code of the
    /// signed-in account's address. Success consumes the code and sets `verified_at`.
    static func attempt(
        _ candidate: String, codeID: UUID?, accountID: UUID?, maxAttempts: Int,
        on connection: PostgresConnection
    ) throws -> Outcome {
        let rows: PostgresRows
        if let codeID {
            rows = try connection.query(
                """
                SELECT c.id, c.code_salt, c.code_digest, c.attempts, c.consumed_at, c.expires_at <= now() AS expired,
                       e.id AS email_id, e.account_id, e.email, e.verified_at
                FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
                WHERE c.id = \(codeID) FOR UPDATE
                """)
        } else if let accountID, let email = try primaryEmail(accountID: accountID, on: connection) {
            rows = try connection.query(
                """
                SELECT c.id, c.code_salt, c.code_digest, c.attempts, c.consumed_at, c.expires_at <= now() AS expired,
                       e.id AS email_id, e.account_id, e.email, e.verified_at
                FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
                WHERE c.account_email_id = \(email.id)
                ORDER BY c.created_at DESC LIMIT 1 FOR UPDATE
                """)
        } else {
            return .invalid
        }
        guard let row = rows.first else { return .invalid }
        let id: UUID = try row.decode("id")
        if try row.decode("consumed_at", as: Date?.self) != nil { return .invalid }
        let attempts: Int = try row.decode("attempts")
        if try row.decode("expired", as: Bool.self) || attempts >= maxAttempts { return .expired }
        let salt: [UInt8] = try row.decode("code_salt")
        let digest: [UInt8] = try row.decode("code_digest")
        guard VerificationCode.matches(candidate, salt: salt, digest: digest) else {
            try connection.query(
                "UPDATE email_verification_codes SET attempts = attempts + 1 WHERE id = \(id)")
            return .invalid
        }
        try connection.query("UPDATE email_verification_codes SET consumed_at = now() WHERE id = \(id)")
        let emailID: UUID = try row.decode("email_id")
        let verifiedAt: Date =
            try connection.query(
                """
                UPDATE account_emails SET verified_at = coalesce(verified_at, now()) WHERE id = \(emailID)
                RETURNING verified_at
                """
            ).first?.decode("verified_at") ?? Date()
        return .verified(
            AccountEmail(
                id: emailID, accountID: try row.decode("account_id"), email: try row.decode("email"),
                verifiedAt: verifiedAt))
    }
}
