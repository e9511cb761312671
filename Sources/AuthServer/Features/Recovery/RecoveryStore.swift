import Crypto
import Foundation
import Postgres
import WebAuthnCore

/// The account an address belongs to, and whether the address is verified: the account that
/// verified it, else the earliest holding it unverified (which recovery refuses), and whether
/// the operator disabled the account (which recovery refuses too).
struct RecoveryTarget: Sendable, Equatable {
    var accountID: UUID
    var email: String
    var verified: Bool
    var disabled: Bool
}

/// A recent recovery code of an address, as `RecoveryFlow.verify` compares it.
struct RecoveryCodeRecord: Sendable, Equatable {
    var id: UUID
    var salt: [UInt8]
    var digest: [UInt8]
    var attempts: Int
    var expired: Bool
    var consumed: Bool
}

/// A live recovery session: what its cookie may do (register a passkey or set a password) for
/// which account. Live means unused, unexpired, and opened by a code mailed to an address that is
/// still a verified address of that account, which is not disabled.
struct RecoverySession: Sendable, Equatable {
    var id: UUID
    var accountID: UUID
}

/// What `RecoveryFlow` reads and writes. Each one-time row (code, session, passkey challenge)
/// is used by a single conditional UPDATE, so it works once and only while it is live, even
/// with many instances racing. A code and the recovery session it opens prove a mailbox, and
/// only while that mailbox is the account's: once an email change or its undo has taken the
/// address from the account, neither recovers it. Nor does either recover a disabled account.
protocol RecoveryStore {
    /// Runs `body` in one transaction; the store it is given uses only that transaction.
    func transaction<T>(_ body: (any RecoveryStore) throws -> T) throws -> T

    /// Counts a start or verify request per address and per client; the seconds to wait when
    /// either count is over its limit.
    func countRequest(
        _ step: RecoveryThrottle.Step, email: String, client: String, settings: Configuration.RecoverySettings
    ) throws -> Int?

    // MARK: Codes

    func target(normalizedEmail: String) throws -> RecoveryTarget?
    /// The round trip an unknown address makes instead of issuing a code.
    func probeCodes(normalizedEmail: String) throws
    /// Stores a new code for the address and retires its earlier live ones, so only the newest
    /// mailed code works.
    func insertCode(
        id: UUID, accountID: UUID, normalizedEmail: String, salt: [UInt8], digest: [UInt8],
        lifetimeSeconds: Int
    ) throws
    /// The address's codes of the last day, newest first: enough to tell a replayed or expired
    /// code from a wrong one.
    func recentCodes(normalizedEmail: String) throws -> [RecoveryCodeRecord]
    /// Uses a code and names its account; nil when it was used, expired or exhausted meanwhile,
    /// or when its address is no longer a verified address of the account, or the account is
    /// disabled.
    func consumeCode(id: UUID, maxAttempts: Int) throws -> UUID?
    /// A wrong code counts against the address's live code (a no-op when there is none: the
    /// same round trip for an unknown address).
    func countWrongCode(normalizedEmail: String) throws

    // MARK: Recovery sessions

    /// Opens a recovery session for the cookie `token` (only its digest is stored), proven by
    /// the address `normalizedEmail`.
    func createSession(id: UUID, accountID: UUID, normalizedEmail: String, token: String, lifetimeSeconds: Int)
        throws
    /// The live, unused recovery session of a cookie token.
    func liveSession(token: String) throws -> RecoverySession?
    /// Marks the session used, inside the transaction of what it was used for, under its
    /// account's lock; nil when it is no longer live.
    func completeSession(token: String) throws -> RecoverySession?
    func createPasskeyChallenge(id: UUID, sessionID: UUID, challenge: [UInt8], lifetimeSeconds: Int) throws
    func consumePasskeyChallenge(id: UUID, sessionID: UUID) throws -> [UInt8]?

    // MARK: The recovered account

    /// The account's row lock, which an email change, its undo, `users disable` and an account
    /// deletion take too: a completing recovery waits for them and then sees what they left.
    func lockAccount(_ id: UUID) throws
    func account(_ id: UUID) throws -> AccountSummary?
    func passkeys(accountID: UUID) throws -> [PasskeyRecord]
    /// false when the credential is already registered (to any account).
    func addPasskey(_ registration: VerifiedRegistration, accountID: UUID, name: String) throws -> Bool
    /// Sets the password and forgets the account's sign-in failures.
    func setPassword(accountID: UUID, hash: String) throws
    /// Ends the account's sessions (but `keep`) and revokes their tokens; how many ended.
    func endSessions(accountID: UUID, keep: UUID?, reason: SignOutEverywhere.Reason) throws -> Int
    /// Starts the session a completed recovery signs in with, ending the browser's previous one.
    func openSession(
        accountID: UUID, amr: [String], userAgent: String, clientAddress: String,
        replacing previousToken: String?
    ) throws -> (token: String, session: CurrentSession)
    func record(_ event: AuditEvent) throws
}

/// `RecoveryStore` in PostgreSQL.
struct PostgresRecoveryStore: RecoveryStore {
    let db: any SQLExecutor
    let sessions: SessionStore

    private static let sessionColumns = PostgresQuery.Fragment("id, account_id")

    /// The condition on a code or a recovery session `r`: the address it was mailed to is still
    /// a verified address of its account (NULL, a session opened before migration 0033, is not),
    /// and the account is not disabled.
    private static let stillRecoverable = PostgresQuery.Fragment(
        """
        EXISTS (SELECT 1 FROM account_emails e JOIN accounts a ON a.id = e.account_id
                WHERE e.account_id = r.account_id AND e.normalized_email = r.normalized_email
                  AND e.verified_at IS NOT NULL AND a.disabled_at IS NULL)
        """)

    func transaction<T>(_ body: (any RecoveryStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresRecoveryStore(db: connection, sessions: sessions))
        }
    }

    func countRequest(
        _ step: RecoveryThrottle.Step, email: String, client: String, settings: Configuration.RecoverySettings
    ) throws -> Int? {
        try RecoveryThrottle(settings: settings).hit(step, email: email, client: client, on: db)
    }

    func target(normalizedEmail: String) throws -> RecoveryTarget? {
        guard
            let row = try db.query(
                """
                SELECT e.account_id, e.email, e.verified_at IS NOT NULL AS verified,
                       a.disabled_at IS NOT NULL AS disabled
                FROM account_emails e JOIN accounts a ON a.id = e.account_id
                WHERE e.normalized_email = \(normalizedEmail)
                ORDER BY e.verified_at IS NULL, e.created_at, e.id LIMIT 1
                """
            ).first
        else { return nil }
        return RecoveryTarget(
            accountID: try row.decode("account_id"), email: try row.decode("email"),
            verified: try row.decode("verified"), disabled: try row.decode("disabled"))
    }

    func probeCodes(normalizedEmail: String) throws {
        try db.query("SELECT 1 FROM recovery_codes WHERE normalized_email = \(normalizedEmail) LIMIT 1")
    }

    func insertCode(
        id: UUID, accountID: UUID, normalizedEmail: String, salt: [UInt8], digest: [UInt8],
        lifetimeSeconds: Int
    ) throws {
        try db.query(
            """
            UPDATE recovery_codes SET consumed_at = now()
            WHERE normalized_email = \(normalizedEmail) AND consumed_at IS NULL
            """)
        try db.query(
            """
            INSERT INTO recovery_codes (id, account_id, normalized_email, code_salt, code_digest, expires_at)
            VALUES (\(id), \(accountID), \(normalizedEmail), \(salt), \(digest),
                    now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func recentCodes(normalizedEmail: String) throws -> [RecoveryCodeRecord] {
        try db.query(
            """
            SELECT id, code_salt, code_digest, attempts, expires_at <= now() AS expired,
                   consumed_at IS NOT NULL AS consumed
            FROM recovery_codes
            WHERE normalized_email = \(normalizedEmail) AND created_at > now() - interval '1 day'
            ORDER BY created_at DESC LIMIT 5
            """
        ).map { row in
            RecoveryCodeRecord(
                id: try row.decode("id"), salt: try row.decode("code_salt"),
                digest: try row.decode("code_digest"),
                attempts: try row.decode("attempts"), expired: try row.decode("expired"),
                consumed: try row.decode("consumed"))
        }
    }

    func consumeCode(id: UUID, maxAttempts: Int) throws -> UUID? {
        try db.query(
            """
            UPDATE recovery_codes r SET consumed_at = now()
            WHERE id = \(id) AND consumed_at IS NULL AND expires_at > now() AND attempts < \(maxAttempts)
              AND \(Self.stillRecoverable)
            RETURNING account_id
            """
        ).first?.decode("account_id")
    }

    func countWrongCode(normalizedEmail: String) throws {
        try db.query(
            """
            UPDATE recovery_codes SET attempts = attempts + 1
            WHERE normalized_email = \(normalizedEmail) AND consumed_at IS NULL AND expires_at > now()
            """)
    }

    // MARK: - Recovery sessions

    static func tokenDigest(_ token: String) -> [UInt8] { SHA256.hash(data: Array(token.utf8)).bytes }

    /// Tokens that cannot be ours are not looked up.
    private static func plausible(_ token: String) -> Bool { !token.isEmpty && token.utf8.count <= 64 }

    private static func session(_ row: PostgresRow) throws -> RecoverySession {
        RecoverySession(id: try row.decode("id"), accountID: try row.decode("account_id"))
    }

    func createSession(id: UUID, accountID: UUID, normalizedEmail: String, token: String, lifetimeSeconds: Int)
        throws
    {
        try db.query(
            """
            INSERT INTO recovery_sessions (id, account_id, normalized_email, token_digest, expires_at)
            VALUES (\(id), \(accountID), \(normalizedEmail), \(Self.tokenDigest(token)),
                    now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func liveSession(token: String) throws -> RecoverySession? {
        guard Self.plausible(token) else { return nil }
        return try db.query(
            """
            SELECT \(Self.sessionColumns) FROM recovery_sessions r
            WHERE token_digest = \(Self.tokenDigest(token)) AND completed_at IS NULL AND expires_at > now()
              AND \(Self.stillRecoverable)
            """
        ).first.map(Self.session)
    }

    func completeSession(token: String) throws -> RecoverySession? {
        guard Self.plausible(token) else { return nil }
        return try db.query(
            """
            UPDATE recovery_sessions r SET completed_at = now()
            WHERE token_digest = \(Self.tokenDigest(token)) AND completed_at IS NULL AND expires_at > now()
              AND \(Self.stillRecoverable)
            RETURNING \(Self.sessionColumns)
            """
        ).first.map(Self.session)
    }

    func createPasskeyChallenge(id: UUID, sessionID: UUID, challenge: [UInt8], lifetimeSeconds: Int) throws {
        try db.query(
            """
            INSERT INTO recovery_passkey_challenges (id, recovery_session_id, challenge, expires_at)
            VALUES (\(id), \(sessionID), \(challenge), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func consumePasskeyChallenge(id: UUID, sessionID: UUID) throws -> [UInt8]? {
        try db.query(
            """
            UPDATE recovery_passkey_challenges SET consumed_at = now()
            WHERE id = \(id) AND recovery_session_id = \(sessionID) AND consumed_at IS NULL AND expires_at > now()
            RETURNING challenge
            """
        ).first?.decode("challenge")
    }

    // MARK: - The recovered account

    func lockAccount(_ id: UUID) throws { try AccountStore.lock(accountID: id, on: db) }

    func account(_ id: UUID) throws -> AccountSummary? { try AccountStore.summary(accountID: id, on: db) }

    func passkeys(accountID: UUID) throws -> [PasskeyRecord] {
        try PasskeyStore.list(accountID: accountID, on: db)
    }

    func addPasskey(_ registration: VerifiedRegistration, accountID: UUID, name: String) throws -> Bool {
        do {
            _ = try PasskeyStore.insert(registration, accountID: accountID, name: name, on: db)
            return true
        } catch PasskeyStore.InsertError.credentialExists {
            return false
        }
    }

    func setPassword(accountID: UUID, hash: String) throws {
        try AccountStore.setPassword(accountID: accountID, hash: hash, on: db)
        try SignInThrottle.clearAccount(accountID, on: db)
    }

    func endSessions(accountID: UUID, keep: UUID?, reason: SignOutEverywhere.Reason) throws -> Int {
        try SignOutEverywhere.run(accountID: accountID, keep: keep, reason: reason, on: db)
    }

    func openSession(
        accountID: UUID, amr: [String], userAgent: String, clientAddress: String,
        replacing previousToken: String?
    ) throws -> (token: String, session: CurrentSession) {
        try sessions.create(
            accountID: accountID, amr: amr, userAgent: userAgent, clientAddress: clientAddress,
            fromRecovery: true,
            replacing: previousToken, on: db)
    }

    func record(_ event: AuditEvent) throws { try AuditLog.record(event, on: db) }
}
