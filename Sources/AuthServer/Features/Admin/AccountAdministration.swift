import Foundation
import Postgres

/// One row of `auth-server users list`.
struct AccountListing: Sendable, Equatable {
    var id: UUID
    var email: String
    var emailVerified: Bool
    var displayName: String
    var hasPassword: Bool
    var passkeys: Int
    var disabledAt: Date?
    var createdAt: Date
}

/// What `auth-server users show` prints about one account.
struct AccountDetails: Sendable {
    struct Email: Sendable { var address: String; var verifiedAt: Date? }
    struct Passkey: Sendable {
        var id: UUID
        var name: String
        var createdAt: Date
        var lastUsedAt: Date?
        var backupEligible: Bool
        var backedUp: Bool
    }
    struct ConnectedClient: Sendable { var clientID: String; var scopes: [String]; var grantedAt: Date }

    var account: AccountListing
    var emails: [Email]
    var passkeys: [Passkey]
    var activeSessions: Int
    var clients: [ConnectedClient]
    var recentEvents: [AuditRecord]
}

/// What the operator's commands do to accounts. Every change that belongs together runs in
/// one transaction with the audit event that describes it (actor `admin`).
enum AccountAdministration {
    /// An account id (UUID) or an email address as typed by the operator; nil when no
    /// account matches.
    static func resolve(_ reference: String, on db: some SQLExecutor) throws -> UUID? {
        if let id = UUID(uuidString: reference) {
            return try db.query("SELECT id FROM accounts WHERE id = \(id)").first?.decode("id")
        }
        // The account that verified the address, else the earliest that holds it unverified.
        return try db.query(
            """
            SELECT account_id FROM account_emails WHERE normalized_email = \(EmailAddress.normalize(reference))
            ORDER BY verified_at IS NULL, created_at, id LIMIT 1
            """
        ).first?.decode("account_id")
    }

    struct ListFilter: Sendable {
        var emailContains: String?
        var disabledOnly = false
        var limit = 100
    }

    static func list(_ filter: ListFilter, on db: some SQLExecutor) throws -> [AccountListing] {
        let pattern = filter.emailContains.map { "%" + escapeLike($0.lowercased()) + "%" }
        return try db.query(
            """
            SELECT \(raw: listingColumns) FROM accounts a
            WHERE (\(pattern)::text IS NULL
                   OR EXISTS (SELECT 1 FROM account_emails m WHERE m.account_id = a.id
                              AND m.normalized_email LIKE \(pattern) ESCAPE '\\'))
              AND (NOT \(filter.disabledOnly)::boolean OR a.disabled_at IS NOT NULL)
            ORDER BY a.created_at DESC, a.id
            LIMIT \(filter.limit)
            """
        ).map(listing)
    }

    static func details(accountID: UUID, on db: some SQLExecutor) throws -> AccountDetails? {
        guard
            let account = try db.query(
                "SELECT \(raw: listingColumns) FROM accounts a WHERE a.id = \(accountID)"
            )
            .first.map(listing)
        else { return nil }
        let emails = try db.query(
            "SELECT email, verified_at FROM account_emails WHERE account_id = \(accountID) ORDER BY created_at"
        ).map {
            AccountDetails.Email(address: try $0.decode("email"), verifiedAt: try $0.decode("verified_at"))
        }
        let passkeys = try db.query(
            """
            SELECT id, name, created_at, last_used_at, backup_eligible, backed_up FROM passkey_credentials
            WHERE account_id = \(accountID) ORDER BY created_at
            """
        ).map {
            AccountDetails.Passkey(
                id: try $0.decode("id"), name: try $0.decode("name"), createdAt: try $0.decode("created_at"),
                lastUsedAt: try $0.decode("last_used_at"), backupEligible: try $0.decode("backup_eligible"),
                backedUp: try $0.decode("backed_up"))
        }
        let sessions: Int =
            try db.query(
                """
                SELECT count(*) AS n FROM authentication_sessions
                WHERE account_id = \(accountID) AND \(raw: SessionStore.live)
                """
            ).first?.decode("n") ?? 0
        let clients = try OAuthStore.consents(accountID: accountID, on: db).map {
            AccountDetails.ConnectedClient(clientID: $0.clientID, scopes: $0.scopes, grantedAt: $0.grantedAt)
        }
        var query = AuditQuery()
        query.accountID = accountID
        query.limit = 10
        return AccountDetails(
            account: account, emails: emails, passkeys: passkeys, activeSessions: sessions, clients: clients,
            recentEvents: try AuditQuery.run(query, on: db))
    }

    /// Disables the account and, in the same transaction, ends every session and revokes
    /// every refresh-token family and access token; false when it was already disabled.
    static func disable(accountID: UUID, pool: PostgresPool) throws -> Bool {
        try pool.withTransaction { connection in
            let changed =
                try connection.query(
                    "UPDATE accounts SET disabled_at = now() WHERE id = \(accountID) AND disabled_at IS NULL"
                ).affectedRows == 1
            guard changed else { return false }
            let sessions = try revokeSessions(accountID: accountID, on: connection)
            try OAuthStore.revokeAllTokens(accountID: accountID, reason: "account_disabled", on: connection)
            try AuditLog.record(
                AuditEvent(
                    kind: .accountDisabled, actor: .admin, accountID: accountID,
                    detail: ["sessions_revoked": String(sessions)]), on: connection)
            return true
        }
    }

    /// False when the account was not disabled.
    static func enable(accountID: UUID, pool: PostgresPool) throws -> Bool {
        try pool.withTransaction { connection in
            let changed =
                try connection.query(
                    "UPDATE accounts SET disabled_at = NULL WHERE id = \(accountID) AND disabled_at IS NOT NULL"
                ).affectedRows == 1
            if changed {
                try AuditLog.record(
                    AuditEvent(kind: .accountEnabled, actor: .admin, accountID: accountID), on: connection)
            }
            return changed
        }
    }

    /// Stores a new password hash, ends the account's sessions and revokes its tokens; returns
    /// how many sessions ended.
    static func resetPassword(accountID: UUID, hash: String, pool: PostgresPool) throws -> Int {
        try pool.withTransaction { connection in
            try AccountStore.setPassword(accountID: accountID, hash: hash, on: connection)
            let sessions = try SignOutEverywhere.run(
                accountID: accountID, keep: nil, reason: .passwordChanged, on: connection)
            try AuditLog.record(
                AuditEvent(
                    kind: .passwordReset, actor: .admin, accountID: accountID,
                    detail: ["sessions_revoked": String(sessions)]), on: connection)
            return sessions
        }
    }

    /// Deletes the account and everything that names it, in one transaction. Most rows go by
    /// `ON DELETE CASCADE`; the rest carry the id without a foreign key (the session's client
    /// list, queued logout deliveries, a completed passkey sign-up, the throttle counters
    /// keyed by its addresses) and are deleted here. Audit events are kept: they outlive the
    /// account until the retention period ends. False when there is no such account.
    static func delete(accountID: UUID, pool: PostgresPool) throws -> Bool {
        try pool.withTransaction { connection in
            guard
                try connection.query("SELECT id FROM accounts WHERE id = \(accountID) FOR UPDATE").first
                    != nil
            else { return false }
            let emails: [String] = try connection.query(
                "SELECT normalized_email FROM account_emails WHERE account_id = \(accountID)"
            ).map { try $0.decode("normalized_email") }
            try connection.query("DELETE FROM session_clients WHERE account_id = \(accountID)")
            try connection.query("DELETE FROM backchannel_logout_deliveries WHERE account_id = \(accountID)")
            try connection.query(
                "DELETE FROM passkey_account_registrations WHERE prospective_account_id = \(accountID)")
            try connection.query(
                "DELETE FROM sign_in_failures WHERE scope = 'account' AND subject = ANY(\(emails))")
            try connection.query(
                """
                DELETE FROM recovery_attempts
                WHERE scope IN ('start_email', 'verify_email') AND subject = ANY(\(emails))
                """)
            try connection.query(
                """
                DELETE FROM email_verification_guesses
                WHERE (scope = 'account' AND subject = \(accountID.uuidString.lowercased()))
                   OR (scope = 'address' AND subject = ANY(\(emails)))
                """)
            try connection.query(
                "DELETE FROM sign_up_attempts WHERE scope = 'email' AND subject = ANY(\(emails))")
            try connection.query(
                """
                DELETE FROM refresh_tokens WHERE family_id IN
                    (SELECT id FROM refresh_token_families WHERE account_id = \(accountID))
                """)
            try connection.query("DELETE FROM access_tokens WHERE account_id = \(accountID)")
            try connection.query("DELETE FROM accounts WHERE id = \(accountID)")
            try AuditLog.record(
                AuditEvent(kind: .accountDeleted, actor: .admin, accountID: accountID), on: connection)
            return true
        }
    }

    // MARK: - Sessions

    /// Ends the account's live sessions as a sign-out does: setting `revoked_at` fires the
    /// trigger that queues back-channel logout for the clients they signed in to.
    static func revokeSessions(accountID: UUID, on db: some SQLExecutor) throws -> Int {
        try db.query(
            "UPDATE authentication_sessions SET revoked_at = now() WHERE account_id = \(accountID) AND revoked_at IS NULL"
        ).affectedRows
    }

    /// Ends sessions (all of an account's, or one) with the `session.revoked` event.
    static func revokeSessions(accountID: UUID?, sessionID: UUID?, pool: PostgresPool) throws -> Int {
        try pool.withTransaction { connection in
            let rows = try connection.query(
                """
                UPDATE authentication_sessions SET revoked_at = now()
                WHERE revoked_at IS NULL AND (\(accountID)::uuid IS NULL OR account_id = \(accountID))
                  AND (\(sessionID)::uuid IS NULL OR id = \(sessionID))
                RETURNING account_id
                """)
            let accounts = Set(try rows.map { try $0.decode("account_id", as: UUID.self) })
            for account in accounts.sorted(by: { $0.uuidString < $1.uuidString }) {
                var detail = [
                    "count": String(try rows.filter { try $0.decode("account_id") == account }.count)
                ]
                if let sessionID { detail["session"] = sessionID.uuidString.lowercased() }
                try AuditLog.record(
                    AuditEvent(kind: .sessionsRevoked, actor: .admin, accountID: account, detail: detail),
                    on: connection)
            }
            return rows.count
        }
    }

    struct SessionListing: Sendable {
        var summary: SessionSummary
        var expiresAt: Date
    }

    static func sessions(accountID: UUID, on db: some SQLExecutor) throws -> [SessionListing] {
        try db.query(
            """
            SELECT id, created_at, last_seen_at, amr, user_agent, client_address,
                   LEAST(expires_at, last_seen_at + make_interval(secs => idle_timeout_seconds)) AS ends_at
            FROM authentication_sessions
            WHERE account_id = \(accountID) AND \(raw: SessionStore.live)
            ORDER BY last_seen_at DESC, created_at DESC
            """
        ).map { row in
            SessionListing(
                summary: SessionSummary(
                    id: try row.decode("id"), createdAt: try row.decode("created_at"),
                    lastSeenAt: try row.decode("last_seen_at"), amr: try row.decode("amr"),
                    userAgent: try row.decode("user_agent"), clientAddress: try row.decode("client_address")),
                expiresAt: try row.decode("ends_at"))
        }
    }

    // MARK: - Helpers

    /// Whether an account may sign in and use its tokens.
    private static let listingColumns = """
        a.id, a.display_name, a.created_at, a.disabled_at,
        (SELECT e.email FROM account_emails e WHERE e.account_id = a.id ORDER BY e.created_at LIMIT 1) AS email,
        COALESCE((SELECT e.verified_at IS NOT NULL FROM account_emails e WHERE e.account_id = a.id
                  ORDER BY e.created_at LIMIT 1), false) AS email_verified,
        EXISTS (SELECT 1 FROM password_credentials p WHERE p.account_id = a.id) AS has_password,
        (SELECT count(*) FROM passkey_credentials k WHERE k.account_id = a.id) AS passkeys
        """

    private static func listing(_ row: PostgresRow) throws -> AccountListing {
        AccountListing(
            id: try row.decode("id"), email: try row.decode("email", as: String?.self) ?? "",
            emailVerified: try row.decode("email_verified"), displayName: try row.decode("display_name"),
            hasPassword: try row.decode("has_password"), passkeys: try row.decode("passkeys"),
            disabledAt: try row.decode("disabled_at"), createdAt: try row.decode("created_at"))
    }

    private static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}

extension PostgresQuery.StringInterpolation {
    /// Appends constant SQL written in this module (column lists, shared conditions); never
    /// for values, which always go through `\(value)`.
    mutating func appendInterpolation(raw sql: String) {
        appendLiteral(sql)
    }
}
