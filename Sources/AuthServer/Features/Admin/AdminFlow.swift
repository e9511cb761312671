import Crypto
import Foundation

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
    /// The roles and groups an operator assigned.
    var attributes = AccountAttributes()
}

/// What the operator's commands (`auth-server users`, `auth-server sessions`) do to accounts.
/// Every change that belongs together runs in one transaction with the audit event that
/// describes it (actor `admin`).
struct AdminFlow {
    let store: any AdminStore
    var system = TimeAndRandomness.live
    /// Sends the revocations of a deleted account's Apple refresh tokens, queued in the deletion's
    /// transaction, once it has committed (the server's worker retries what fails).
    var revokeUpstreamTokens: ([UUID]) -> Void = { _ in }
    /// The configured clients: a deleted account's back-channel logout reaches those that hold
    /// its tokens (`AccountDeletion`).
    var clients: [ClientMetadata] = []

    /// An account as the operator names it: its id, or an email address (normalized).
    enum AccountReference: Equatable {
        case id(UUID)
        case email(normalized: String)

        init(_ text: String) {
            self =
                UUID(uuidString: text).map(AccountReference.id)
                ?? .email(normalized: EmailAddress.normalize(text))
        }
    }

    struct ListFilter: Sendable {
        var emailContains: String?
        var disabledOnly = false
        var limit = 100
    }

    // MARK: - Reading

    func resolve(_ reference: String) throws -> UUID? { try store.resolve(AccountReference(reference)) }
    func list(_ filter: ListFilter) throws -> [AccountListing] { try store.list(filter) }
    func details(accountID: UUID) throws -> AccountDetails? { try store.details(accountID: accountID) }
    func sessions(accountID: UUID) throws -> [SessionListing] { try store.sessions(accountID: accountID) }
    func auditEvents(_ query: AuditQuery) throws -> [AuditRecord] { try store.auditEvents(query) }

    // MARK: - Creating

    /// Creates an account with a password (already checked against the policy); nil when an
    /// account holds the address already.
    func create(displayName: String, email: EmailAddress, password: String) throws -> UUID? {
        let hash = try PasswordHasher().hash(password)
        let id = system.uuid()
        do {
            try store.transaction { store in
                try store.insertAccount(
                    id: id, displayName: displayName, email: email, userHandle: system.randomBytes(32))
                try store.setPassword(accountID: id, hash: hash)
                try store.record(
                    AuditEvent(kind: .accountCreated, actor: .admin, accountID: id, detail: ["method": "cli"])
                )
            }
        } catch AccountStore.CreateError.emailTaken {
            return nil
        }
        return id
    }

    /// Imports every entry or none: one problem per address another account holds already
    /// (all of them, not only the first), and then nothing is kept.
    enum ImportOutcome: Equatable {
        case imported(count: Int)
        case refused(problems: [String])
    }

    func importAccounts(_ entries: [AccountImport.Entry]) throws -> ImportOutcome {
        struct Refused: Error {}
        var taken: [String] = []
        do {
            try store.transaction { store in
                for (index, entry) in entries.enumerated() {
                    // 1. The account and its password, in a savepoint so that a duplicate leaves
                    //    the transaction usable and every duplicate is reported.
                    let id = system.uuid()
                    let inserted = try store.savepoint {
                        try store.insertAccount(
                            id: id, displayName: entry.name, email: entry.email,
                            userHandle: system.randomBytes(32))
                        try store.setPassword(accountID: id, hash: entry.passwordHash)
                    }
                    guard inserted else {
                        taken.append(
                            "[\(index)].email: an account with \(entry.email.address) already exists")
                        continue
                    }
                    // 2. Its audit event.
                    try store.record(
                        AuditEvent(
                            kind: .accountCreated, actor: .admin, accountID: id, detail: ["method": "import"])
                    )
                }
                // 3. Any duplicate rolls the whole import back.
                if !taken.isEmpty { throw Refused() }
            }
        } catch is Refused {
            return .refused(problems: taken)
        }
        return .imported(count: entries.count)
    }

    // MARK: - Changing

    /// Disables the account and, in the same transaction, ends every session and revokes
    /// every refresh-token family and access token; false when it was already disabled.
    func disable(accountID: UUID) throws -> Bool {
        try store.transaction { store in
            guard try store.markDisabled(accountID: accountID) else { return false }
            let sessions = try store.revokeSessions(accountID: accountID)
            try store.revokeAllTokens(accountID: accountID, reason: "account_disabled")
            try store.record(
                AuditEvent(
                    kind: .accountDisabled, actor: .admin, accountID: accountID,
                    detail: ["sessions_revoked": String(sessions)]))
            return true
        }
    }

    /// False when the account was not disabled.
    func enable(accountID: UUID) throws -> Bool {
        try store.transaction { store in
            let changed = try store.markEnabled(accountID: accountID)
            if changed {
                try store.record(AuditEvent(kind: .accountEnabled, actor: .admin, accountID: accountID))
            }
            return changed
        }
    }

    enum PasswordResetOutcome: Equatable {
        /// The password breaks the policy (why, in a sentence).
        case refused(String)
        /// `generated`: the new password when none was given.
        case reset(generated: String?, sessionsEnded: Int)
    }

    /// Sets `given` (or a generated password), ends the account's sessions and revokes its
    /// tokens, in one transaction.
    func resetPassword(accountID: UUID, given: String?) throws -> PasswordResetOutcome {
        let email = try store.email(accountID: accountID) ?? ""
        let password = given ?? Base64URL.encode(system.randomBytes(18))
        if let problem = PasswordPolicy.check(password, email: EmailAddress.normalize(email)) {
            return .refused(problem.message)
        }
        let hash = try PasswordHasher().hash(password)
        let ended = try store.transaction { store in
            try store.setPassword(accountID: accountID, hash: hash)
            let sessions = try store.signOutEverywhere(accountID: accountID)
            try store.record(
                AuditEvent(
                    kind: .passwordReset, actor: .admin, accountID: accountID,
                    detail: ["sessions_revoked": String(sessions)]))
            return sessions
        }
        return .reset(generated: given == nil ? password : nil, sessionsEnded: ended)
    }

    /// Deletes the account and everything that names it, in one transaction (`AccountDeletion`,
    /// the same list the account holder's own deletion uses). Audit events are kept under a
    /// random anonymous id until the retention period ends. Nil when there is no such account;
    /// otherwise what remains to do after the commit (upstream tokens to revoke).
    func delete(accountID: UUID) throws -> AccountDeletion.Outcome? {
        let anonymousID = system.uuid()
        let outcome = try store.transaction { store -> AccountDeletion.Outcome? in
            guard
                let outcome = try store.deleteAccount(
                    accountID: accountID, anonymousID: anonymousID, clients: clients)
            else {
                return nil
            }
            try store.record(
                AuditEvent(
                    kind: .accountDeleted, actor: .admin, accountID: anonymousID,
                    detail: ["by": "admin"]))
            return outcome
        }
        if let outcome, !outcome.revocations.isEmpty { revokeUpstreamTokens(outcome.revocations) }
        return outcome
    }

    // MARK: - Profile

    enum ProfileOutcome: Equatable {
        /// A value breaks its rule; nothing was written.
        case invalid(ProfileChange.Problem)
        case noAccount
        /// The account's name and profile after the change.
        case updated(displayName: String, profile: ProfileFields)
    }

    func profile(accountID: UUID) throws -> AccountSummary? { try store.profile(accountID: accountID) }

    /// Changes the display name and profile fields as the account holder can on `/account`
    /// (same rules, all or nothing), with an `account.profile_updated` event naming the claims
    /// that changed; none when nothing changed.
    func updateProfile(accountID: UUID, change: ProfileChange) throws -> ProfileOutcome {
        // 1. Every value against its rule.
        let checked: ProfileChange
        do {
            checked = try change.validated()
        } catch {
            return .invalid(error)
        }
        return try store.transaction { store in
            // 2. The stored profile, locked, and the change applied to it.
            guard let account = try store.lockedProfile(accountID: accountID) else { return .noAccount }
            let displayName = checked.displayName ?? account.displayName
            let profile = checked.applied(to: account.profile)
            var changed = ProfileFields.Field.allCases.filter { profile[$0] != account.profile[$0] }.map(
                \.rawValue)
            if displayName != account.displayName { changed.insert("name", at: 0) }
            // 3. The write and its event.
            if !changed.isEmpty {
                try store.updateProfile(accountID: accountID, displayName: displayName, profile: profile)
                try store.record(
                    AuditEvent(
                        kind: .profileUpdated, actor: .admin, accountID: accountID,
                        detail: ["fields": changed.joined(separator: ",")]))
            }
            return .updated(displayName: displayName, profile: profile)
        }
    }

    // MARK: - Roles and groups

    enum AttributeChange: Equatable {
        /// The name breaks `AccountAttributes.isValidName`; nothing was written.
        case invalidName
        /// The account has no such id (it was deleted meanwhile).
        case noAccount
        case changed
        /// Already held (add) or not held (remove): nothing to do, and no audit event.
        case unchanged
    }

    func attributes(accountID: UUID) throws -> AccountAttributes {
        try store.attributes(accountID: accountID)
    }

    /// Assigns (`add`) or removes a role or group, with its audit event (`account.role_added`
    /// …, detail: name) in the same transaction. Access tokens already issued keep the
    /// attributes they were issued with until they expire.
    func changeAttribute(_ kind: AccountAttributes.Kind, name: String, add: Bool, accountID: UUID) throws
        -> AttributeChange
    {
        // 1. The name, by the rule the table's CHECK repeats.
        guard AccountAttributes.isValidName(name) else { return .invalidName }
        return try store.transaction { store in
            // 2. The account still exists (it may have been deleted since it was named).
            guard try store.resolve(.id(accountID)) != nil else { return .noAccount }
            // 3. The change and its event.
            let changed =
                add
                ? try store.addAttribute(kind, name: name, accountID: accountID)
                : try store.removeAttribute(kind, name: name, accountID: accountID)
            guard changed else { return .unchanged }
            let event: AuditEventKind =
                switch (kind, add) {
                case (.role, true): .roleAdded
                case (.role, false): .roleRemoved
                case (.group, true): .groupAdded
                case (.group, false): .groupRemoved
                }
            try store.record(
                AuditEvent(kind: event, actor: .admin, accountID: accountID, detail: ["name": name]))
            return .changed
        }
    }

    /// Ends sessions (all of an account's, or one) with one `session.revoked` event per account.
    func revokeSessions(accountID: UUID?, sessionID: UUID?) throws -> Int {
        try store.transaction { store in
            let accounts = try store.revokeSessions(accountID: accountID, sessionID: sessionID)
            for account in Set(accounts).sorted(by: { $0.uuidString < $1.uuidString }) {
                var detail = ["count": String(accounts.filter { $0 == account }.count)]
                if let sessionID { detail["session"] = sessionID.lowercased }
                try store.record(
                    AuditEvent(kind: .sessionsRevoked, actor: .admin, accountID: account, detail: detail))
            }
            return accounts.count
        }
    }
}
