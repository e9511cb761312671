import Crypto
import Foundation
import Postgres

/// An account as the pages and the API show it.
struct AccountSummary: Sendable, Equatable {
    var id: UUID
    var displayName: String
    var email: String
    var userHandle: [UInt8]
    var hasPassword: Bool
    var createdAt: Date
    /// Whether the address has been proven to reach the account holder.
    var emailVerified = false
    /// The optional profile claims.
    var profile = ProfileFields()
    /// When a released claim last changed (`updated_at`): the display name, a profile field,
    /// the address or its verification.
    var profileUpdatedAt = Date(timeIntervalSince1970: 0)
}

/// SQL for accounts, their email addresses and their password.
struct AccountStore: Sendable {
    enum CreateError: Error, Equatable { case emailTaken }

    static let displayNameMaxLength = 200

    /// Inserts the account and its email, unverified. Several accounts may hold one address
    /// unverified (the first to verify it wins); with `exclusive` (the operator's commands),
    /// `emailTaken` when any account holds the normalized address. Run inside the caller's
    /// transaction when more rows belong with it.
    static func insertAccount(
        id: UUID, displayName: String, email: EmailAddress, userHandle: [UInt8], exclusive: Bool = false,
        on db: some SQLExecutor
    ) throws {
        if exclusive,
            try !db.query("SELECT 1 FROM account_emails WHERE normalized_email = \(email.normalized) LIMIT 1")
                .isEmpty
        {
            throw CreateError.emailTaken
        }
        try db.query(
            "INSERT INTO accounts (id, display_name, webauthn_user_handle) VALUES (\(id), \(displayName), \(userHandle))"
        )
        do {
            try db.query(
                """
                INSERT INTO account_emails (id, account_id, email, normalized_email)
                VALUES (\(UUID.random()), \(id), \(email.address), \(email.normalized))
                """)
        } catch let error as PostgresError where error.kind == .uniqueViolation {
            throw CreateError.emailTaken
        }
    }

    /// Locks the account's row until the caller's transaction ends. Every change that must
    /// leave the account a way to sign in (removing a passkey, removing the password) takes it
    /// first, so two of them never both pass their check on the other's stale view. `FOR NO KEY
    /// UPDATE`: the lock holders wait for each other, but not a row that merely refers to the
    /// account (a sign-in's session, whose foreign key share-locks the account's key while the
    /// sign-in holds the password's or the passkey's row that the lock holder waits for).
    static func lock(accountID: UUID, on db: some SQLExecutor) throws {
        try db.query("SELECT id FROM accounts WHERE id = \(accountID) FOR NO KEY UPDATE")
    }

    static func setPassword(accountID: UUID, hash: String, on db: some SQLExecutor) throws {
        try db.query(
            """
            INSERT INTO password_credentials (account_id, password_hash) VALUES (\(accountID), \(hash))
            ON CONFLICT (account_id) DO UPDATE SET password_hash = EXCLUDED.password_hash, updated_at = now()
            """)
    }

    /// The account and its stored password hash (nil when passwordless) for a sign-in: the
    /// account that verified the address, else the earliest of the accounts holding it
    /// unverified. One account, so a sign-in costs one password check whatever the address;
    /// a later sign-up with someone's address does not take their sign-in over.
    static func passwordCredential(normalizedEmail: String, on db: some SQLExecutor) throws -> (
        accountID: UUID, passwordHash: String?, disabled: Bool
    )? {
        let rows = try db.query(
            """
            SELECT e.account_id, p.password_hash, a.disabled_at IS NOT NULL AS disabled FROM account_emails e
            JOIN accounts a ON a.id = e.account_id
            LEFT JOIN password_credentials p ON p.account_id = e.account_id
            WHERE e.normalized_email = \(normalizedEmail)
            ORDER BY e.verified_at IS NULL, e.created_at, e.id LIMIT 1
            """)
        guard let row = rows.first else { return nil }
        return (
            try row.decode("account_id"), try row.decode("password_hash", as: String?.self),
            try row.decode("disabled")
        )
    }

    static func passwordHash(accountID: UUID, on db: some SQLExecutor) throws -> String? {
        try db.query("SELECT password_hash FROM password_credentials WHERE account_id = \(accountID)")
            .first?.decode("password_hash")
    }

    static func deletePassword(accountID: UUID, on db: some SQLExecutor) throws -> Bool {
        try db.query("DELETE FROM password_credentials WHERE account_id = \(accountID)").affectedRows == 1
    }

    static func summary(accountID: UUID, on db: some SQLExecutor) throws -> AccountSummary? {
        let rows = try db.query(
            """
            SELECT a.id, a.display_name, a.webauthn_user_handle, a.created_at,
                   a.given_name, a.family_name, a.preferred_username, a.locale, a.picture,
                   a.profile_updated_at,
                   e.email, e.verified_at IS NOT NULL AS email_verified,
                   EXISTS (SELECT 1 FROM password_credentials p WHERE p.account_id = a.id) AS has_password
            FROM accounts a
            LEFT JOIN LATERAL (
                SELECT email, verified_at FROM account_emails WHERE account_id = a.id ORDER BY created_at, id LIMIT 1
            ) e ON true
            WHERE a.id = \(accountID)
            """)
        guard let row = rows.first else { return nil }
        return AccountSummary(
            id: try row.decode("id"), displayName: try row.decode("display_name"),
            email: try row.decode("email", as: String?.self) ?? "",
            userHandle: try row.decode("webauthn_user_handle"),
            hasPassword: try row.decode("has_password"), createdAt: try row.decode("created_at"),
            emailVerified: try row.decode("email_verified", as: Bool?.self) ?? false,
            profile: ProfileFields(
                givenName: try row.decode("given_name"), familyName: try row.decode("family_name"),
                preferredUsername: try row.decode("preferred_username"), locale: try row.decode("locale"),
                picture: try row.decode("picture")),
            profileUpdatedAt: try row.decode("profile_updated_at"))
    }

    static func rename(accountID: UUID, displayName: String, on db: some SQLExecutor) throws {
        try db.query("UPDATE accounts SET display_name = \(displayName) WHERE id = \(accountID)")
    }

    /// Writes the display name and the profile fields in one statement. The table's trigger
    /// (migrations/0015_profile.sql) moves `profile_updated_at` when a value differs, so
    /// saving an unchanged form leaves `updated_at` alone.
    static func updateProfile(
        accountID: UUID, displayName: String, profile: ProfileFields, on db: some SQLExecutor
    ) throws {
        try db.query(
            """
            UPDATE accounts SET display_name = \(displayName), given_name = \(profile.givenName),
                family_name = \(profile.familyName), preferred_username = \(profile.preferredUsername),
                locale = \(profile.locale), picture = \(profile.picture)
            WHERE id = \(accountID)
            """)
    }

    /// A display name as entered: trimmed, 1…200 characters (Unicode scalars, as the table's
    /// CHECK counts them), no control characters.
    static func validDisplayName(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.unicodeScalars.count <= displayNameMaxLength,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return trimmed
    }
}
