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
        /// The account or the address has spent its guesses for this window.
        case locked(retryAfter: Int)
    }

    enum IssueResult: Sendable, Equatable {
        /// `heldBy` is the stored address of the account that verified this address, when
        /// another account did: then the code must not be mailed (it could never be used).
        case issued(id: UUID, code: String, linkToken: String, email: AccountEmail, heldBy: String?)
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
        let linkToken = VerificationCode.newLinkToken()
        try connection.query(
            """
            INSERT INTO email_verification_codes
                (id, account_email_id, code_salt, code_digest, link_digest, expires_at)
            VALUES (\(id), \(email.id), \(salt), \(digest), \(VerificationCode.linkDigest(linkToken)),
                    now() + make_interval(secs => \(lifetimeSeconds)))
            """)
        let heldBy: String? = try connection.query(
            """
            SELECT h.email FROM account_emails h JOIN account_emails e ON e.normalized_email = h.normalized_email
            WHERE e.id = \(email.id) AND h.verified_at IS NOT NULL AND h.account_id <> \(accountID)
            """
        ).first?.decode("email")
        return .issued(id: id, code: code, linkToken: linkToken, email: email, heldBy: heldBy)
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

    /// The code a guess is aimed at: with `codeID` (the account page's plain form) that row,
    /// else the newest code of the signed-in account's address. Read without a lock: it only
    /// names the account and the address whose budget the guess spends.
    static func target(codeID: UUID?, accountID: UUID?, on db: some SQLExecutor) throws
        -> (codeID: UUID, accountID: UUID, normalizedEmail: String)?
    {
        let rows: PostgresRows
        if let codeID {
            rows = try db.query(
                """
                SELECT c.id, e.account_id, e.normalized_email
                FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
                WHERE c.id = \(codeID)
                """)
        } else if let accountID, let email = try primaryEmail(accountID: accountID, on: db) {
            rows = try db.query(
                """
                SELECT c.id, e.account_id, e.normalized_email
                FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
                WHERE c.account_email_id = \(email.id)
                ORDER BY c.created_at DESC LIMIT 1
                """)
        } else {
            return nil
        }
        guard let row = rows.first else { return nil }
        return (try row.decode("id"), try row.decode("account_id"), try row.decode("normalized_email"))
    }

    /// The code a link token belongs to.
    static func codeID(linkToken: String, on db: some SQLExecutor) throws -> UUID? {
        try db.query(
            "SELECT id FROM email_verification_codes WHERE link_digest = \(VerificationCode.linkDigest(linkToken))"
        ).first?.decode("id")
    }

    /// Checks a guess at code `codeID` inside the caller's transaction, counting the attempt on
    /// the code; `candidate` nil means the link's token already matched. The rows of every
    /// account holding the address are locked first (always in that order, before the code),
    /// so that two holders verifying at once cannot both win.
    static func attempt(
        _ candidate: String?, codeID: UUID, normalizedEmail: String, maxAttempts: Int,
        on connection: PostgresConnection
    ) throws -> (outcome: Outcome, released: [UUID]) {
        try connection.query(
            "SELECT id FROM account_emails WHERE normalized_email = \(normalizedEmail) ORDER BY id FOR UPDATE"
        )
        let rows = try connection.query(
            """
            SELECT c.id, c.code_salt, c.code_digest, c.attempts, c.consumed_at, c.expires_at <= now() AS expired,
                   e.id AS email_id, e.account_id, e.email, e.verified_at
            FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
            WHERE c.id = \(codeID) FOR UPDATE OF c
            """)
        guard let row = rows.first else { return (.invalid, []) }
        let id: UUID = try row.decode("id")
        if try row.decode("consumed_at", as: Date?.self) != nil { return (.invalid, []) }
        let attempts: Int = try row.decode("attempts")
        if try row.decode("expired", as: Bool.self) || attempts >= maxAttempts { return (.expired, []) }
        if let candidate {
            let salt: [UInt8] = try row.decode("code_salt")
            let digest: [UInt8] = try row.decode("code_digest")
            guard VerificationCode.matches(candidate, salt: salt, digest: digest) else {
                try connection.query(
                    "UPDATE email_verification_codes SET attempts = attempts + 1 WHERE id = \(id)")
                return (.invalid, [])
            }
        }
        let emailID: UUID = try row.decode("email_id")
        let accountID: UUID = try row.decode("account_id")
        // Another account verified the address first: this code can never win it.
        let heldElsewhere = try !connection.query(
            """
            SELECT 1 FROM account_emails WHERE normalized_email = \(normalizedEmail)
            AND verified_at IS NOT NULL AND account_id <> \(accountID)
            """
        ).isEmpty
        if heldElsewhere { return (.invalid, []) }
        try connection.query("UPDATE email_verification_codes SET consumed_at = now() WHERE id = \(id)")
        let verifiedAt: Date =
            try connection.query(
                """
                UPDATE account_emails SET verified_at = coalesce(verified_at, now()) WHERE id = \(emailID)
                RETURNING verified_at
                """
            ).first?.decode("verified_at") ?? Date()
        // The first to verify wins: the other holders lose the address (their codes go with it).
        let released = try connection.query(
            """
            DELETE FROM account_emails WHERE normalized_email = \(normalizedEmail) AND id <> \(emailID)
            RETURNING account_id
            """
        ).map { try $0.decode("account_id", as: UUID.self) }
        return (
            .verified(
                AccountEmail(
                    id: emailID, accountID: accountID, email: try row.decode("email"), verifiedAt: verifiedAt)
            ),
            released
        )
    }
}
