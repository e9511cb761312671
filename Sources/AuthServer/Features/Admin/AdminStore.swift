import Foundation
import Postgres

/// What the operator's account commands need from the database: only these operations, so
/// that `AdminFlow` reads as the steps of each command.
protocol AdminStore {
    /// Runs `body` in one transaction; every operation of the store it is given uses that
    /// transaction's connection.
    func transaction<T>(_ body: (any AdminStore) throws -> T) throws -> T

    /// The account with this id, or the one that verified this address, else the earliest
    /// that holds it unverified; nil when none matches.
    func resolve(_ reference: AdminFlow.AccountReference) throws -> UUID?
    func list(_ filter: AdminFlow.ListFilter) throws -> [AccountListing]
    func details(accountID: UUID) throws -> AccountDetails?
    func sessions(accountID: UUID) throws -> [SessionListing]
    /// The account's first email address, for the password policy's "not your address" rule.
    func email(accountID: UUID) throws -> String?

    /// Sets `disabled_at`; false when it was already set.
    func markDisabled(accountID: UUID) throws -> Bool
    /// Clears `disabled_at`; false when it was not set.
    func markEnabled(accountID: UUID) throws -> Bool
    /// Ends the account's live sessions as a sign-out does: setting `revoked_at` fires the
    /// trigger that queues back-channel logout for the clients they signed in to.
    func revokeSessions(accountID: UUID) throws -> Int
    /// Ends live sessions (an account's, one, or both filters); the account of each ended session.
    func revokeSessions(accountID: UUID?, sessionID: UUID?) throws -> [UUID]
    func revokeAllTokens(accountID: UUID, reason: String) throws
    /// Ends every session and revokes every token, as a password change does; how many sessions ended.
    func signOutEverywhere(accountID: UUID) throws -> Int

    /// `AccountStore.CreateError.emailTaken` when any account holds the address.
    func insertAccount(id: UUID, displayName: String, email: EmailAddress, userHandle: [UInt8]) throws
    func setPassword(accountID: UUID, hash: String) throws
    /// Runs `body` inside a savepoint: the savepoint is released when it returns, and rolled
    /// back (the transaction stays usable) when it throws `AccountStore.CreateError.emailTaken`,
    /// which then returns false.
    func savepoint(_ body: () throws -> Void) throws -> Bool
    /// Deletes the account and every row that names it (`AccountDeletion`); its audit events
    /// move to `anonymousID`. Nil when there is no such account.
    func deleteAccount(accountID: UUID, anonymousID: UUID, clients: [ClientMetadata]) throws
        -> AccountDeletion.Outcome?

    func profile(accountID: UUID) throws -> AccountSummary?
    /// The account's display name and profile fields, with its row locked until the
    /// transaction ends; nil when there is no such account.
    func lockedProfile(accountID: UUID) throws -> AccountSummary?
    /// Writes the display name and profile fields (`updated_at` moves when one differs).
    func updateProfile(accountID: UUID, displayName: String, profile: ProfileFields) throws

    /// The account's roles and groups.
    func attributes(accountID: UUID) throws -> AccountAttributes
    /// True when the account did not hold the role or group yet.
    func addAttribute(_ kind: AccountAttributes.Kind, name: String, accountID: UUID) throws -> Bool
    /// True when the account held the role or group.
    func removeAttribute(_ kind: AccountAttributes.Kind, name: String, accountID: UUID) throws -> Bool

    func record(_ event: AuditEvent) throws
    /// Stored audit events matching `query`, newest first.
    func auditEvents(_ query: AuditQuery) throws -> [AuditRecord]
}

/// One row of `auth-server sessions list`.
struct SessionListing: Sendable {
    var summary: SessionSummary
    var expiresAt: Date
}

struct PostgresAdminStore: AdminStore {
    let db: any SQLExecutor

    func transaction<T>(_ body: (any AdminStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresAdminStore(db: connection)) }
    }

    func resolve(_ reference: AdminFlow.AccountReference) throws -> UUID? {
        switch reference {
        case .id(let id):
            return try db.query("SELECT id FROM accounts WHERE id = \(id)").first?.decode("id")
        case .email(let normalized):
            return try db.query(
                """
                SELECT account_id FROM account_emails WHERE normalized_email = \(normalized)
                ORDER BY verified_at IS NULL, created_at, id LIMIT 1
                """
            ).first?.decode("account_id")
        }
    }

    func list(_ filter: AdminFlow.ListFilter) throws -> [AccountListing] {
        let pattern = filter.emailContains.map { "%" + Self.escapeLike($0.lowercased()) + "%" }
        return try db.query(
            """
            SELECT \(raw: Self.listingColumns) FROM accounts a
            WHERE (\(pattern)::text IS NULL
                   OR EXISTS (SELECT 1 FROM account_emails m WHERE m.account_id = a.id
                              AND m.normalized_email LIKE \(pattern) ESCAPE '\\'))
              AND (NOT \(filter.disabledOnly)::boolean OR a.disabled_at IS NOT NULL)
            ORDER BY a.created_at DESC, a.id
            LIMIT \(filter.limit)
            """
        ).map(Self.listing)
    }

    func details(accountID: UUID) throws -> AccountDetails? {
        guard
            let account = try db.query(
                "SELECT \(raw: Self.listingColumns) FROM accounts a WHERE a.id = \(accountID)"
            )
            .first.map(Self.listing)
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
            recentEvents: try auditEvents(query), attributes: try attributes(accountID: accountID))
    }

    func sessions(accountID: UUID) throws -> [SessionListing] {
        try db.query(
            """
            SELECT id, created_at, last_seen_at, amr, user_agent, client_address,
                   LEAST(expires_at, idle_expires_at) AS ends_at
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

    func email(accountID: UUID) throws -> String? {
        try AccountStore.summary(accountID: accountID, on: db)?.email
    }

    func markDisabled(accountID: UUID) throws -> Bool {
        try db.query(
            "UPDATE accounts SET disabled_at = now() WHERE id = \(accountID) AND disabled_at IS NULL"
        )
        .affectedRows == 1
    }

    func markEnabled(accountID: UUID) throws -> Bool {
        try db.query(
            "UPDATE accounts SET disabled_at = NULL WHERE id = \(accountID) AND disabled_at IS NOT NULL"
        ).affectedRows == 1
    }

    func revokeSessions(accountID: UUID) throws -> Int {
        try db.query(
            "UPDATE authentication_sessions SET revoked_at = now() WHERE account_id = \(accountID) AND revoked_at IS NULL"
        ).affectedRows
    }

    func revokeSessions(accountID: UUID?, sessionID: UUID?) throws -> [UUID] {
        try db.query(
            """
            UPDATE authentication_sessions SET revoked_at = now()
            WHERE revoked_at IS NULL AND (\(accountID)::uuid IS NULL OR account_id = \(accountID))
              AND (\(sessionID)::uuid IS NULL OR id = \(sessionID))
            RETURNING account_id
            """
        ).map { try $0.decode("account_id") }
    }

    func revokeAllTokens(accountID: UUID, reason: String) throws {
        try OAuthStore.revokeAllTokens(accountID: accountID, reason: reason, on: db)
    }

    func signOutEverywhere(accountID: UUID) throws -> Int {
        try SignOutEverywhere.run(accountID: accountID, keep: nil, reason: .passwordChanged, on: db)
    }

    func insertAccount(id: UUID, displayName: String, email: EmailAddress, userHandle: [UInt8]) throws {
        try AccountStore.insertAccount(
            id: id, displayName: displayName, email: email, userHandle: userHandle, exclusive: true, on: db)
    }

    func setPassword(accountID: UUID, hash: String) throws {
        try AccountStore.setPassword(accountID: accountID, hash: hash, on: db)
    }

    func savepoint(_ body: () throws -> Void) throws -> Bool {
        try db.query("SAVEPOINT entry")
        do {
            try body()
            try db.query("RELEASE SAVEPOINT entry")
            return true
        } catch AccountStore.CreateError.emailTaken {
            try db.query("ROLLBACK TO SAVEPOINT entry")
            return false
        }
    }

    func deleteAccount(accountID: UUID, anonymousID: UUID, clients: [ClientMetadata]) throws
        -> AccountDeletion.Outcome?
    {
        try AccountDeletion.run(accountID: accountID, anonymousID: anonymousID, clients: clients, on: db)
    }

    func profile(accountID: UUID) throws -> AccountSummary? {
        try AccountStore.summary(accountID: accountID, on: db)
    }

    func lockedProfile(accountID: UUID) throws -> AccountSummary? {
        try AccountStore.lock(accountID: accountID, on: db)
        return try AccountStore.summary(accountID: accountID, on: db)
    }

    func updateProfile(accountID: UUID, displayName: String, profile: ProfileFields) throws {
        try AccountStore.updateProfile(
            accountID: accountID, displayName: displayName, profile: profile, on: db)
    }

    func attributes(accountID: UUID) throws -> AccountAttributes {
        try AccountStore.attributes(accountID: accountID, on: db)
    }

    func addAttribute(_ kind: AccountAttributes.Kind, name: String, accountID: UUID) throws -> Bool {
        try AccountStore.addAttribute(kind, name: name, accountID: accountID, on: db)
    }

    func removeAttribute(_ kind: AccountAttributes.Kind, name: String, accountID: UUID) throws -> Bool {
        try AccountStore.removeAttribute(kind, name: name, accountID: accountID, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }

    func auditEvents(_ query: AuditQuery) throws -> [AuditRecord] {
        try db.query(
            """
            SELECT id, occurred_at, event, actor, account_id, client_id, client_address, detail::text AS detail
            FROM audit_events
            WHERE (\(query.since)::timestamptz IS NULL OR occurred_at >= \(query.since))
              AND (\(query.until)::timestamptz IS NULL OR occurred_at <= \(query.until))
              AND (\(query.accountID)::uuid IS NULL OR account_id = \(query.accountID))
              AND (\(query.event)::text IS NULL OR event = \(query.event))
            ORDER BY occurred_at DESC, id DESC
            LIMIT \(query.limit)
            """
        ).map { row in
            AuditRecord(
                id: try row.decode("id"), occurredAt: try row.decode("occurred_at"),
                event: try row.decode("event"),
                actor: try row.decode("actor"), accountID: try row.decode("account_id"),
                clientID: try row.decode("client_id"), clientAddress: try row.decode("client_address"),
                detail: AuditQuery.decodeDetail(try row.decode("detail")))
        }
    }

    // MARK: - One column list for a listing row

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
