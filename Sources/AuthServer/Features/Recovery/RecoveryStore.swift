import Crypto
import Foundation
import Postgres

/// SQL for recovery codes, recovery sessions and their passkey challenges. Each one-time row
/// is used by a single conditional UPDATE, so it works once and only while it is live, even
/// with many instances racing.
enum RecoveryStore {
    /// The account an address belongs to, and whether the address is verified: the account
    /// that verified it, else the earliest holding it unverified (which recovery refuses).
    struct Target: Sendable {
        var accountID: UUID
        var email: String
        var verified: Bool
    }

    static func target(normalizedEmail: String, on db: some SQLExecutor) throws -> Target? {
        guard
            let row = try db.query(
                """
                SELECT account_id, email, verified_at IS NOT NULL AS verified FROM account_emails
                WHERE normalized_email = \(normalizedEmail)
                ORDER BY verified_at IS NULL, created_at, id LIMIT 1
                """
            ).first
        else { return nil }
        return Target(
            accountID: try row.decode("account_id"), email: try row.decode("email"),
            verified: try row.decode("verified"))
    }

    /// Stores a new code for the address and retires the earlier live ones, so only the
    /// newest mailed code works.
    static func insertCode(
        accountID: UUID, normalizedEmail: String, salt: [UInt8], digest: [UInt8], lifetimeSeconds: Int,
        on db: some SQLExecutor
    ) throws {
        try db.query(
            """
            UPDATE recovery_codes SET consumed_at = now()
            WHERE normalized_email = \(normalizedEmail) AND consumed_at IS NULL
            """)
        try db.query(
            """
            INSERT INTO recovery_codes (id, account_id, normalized_email, code_salt, code_digest, expires_at)
            VALUES (\(UUID.random()), \(accountID), \(normalizedEmail), \(salt), \(digest),
                    now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    struct CodeRow: Sendable {
        var id: UUID
        var salt: [UInt8]
        var digest: [UInt8]
        var attempts: Int
        var expired: Bool
        var consumed: Bool
    }

    /// The address's codes of the last day, newest first: enough to tell a replayed or
    /// expired code from a wrong one.
    static func recentCodes(normalizedEmail: String, on db: some SQLExecutor) throws -> [CodeRow] {
        try db.query(
            """
            SELECT id, code_salt, code_digest, attempts, expires_at <= now() AS expired,
                   consumed_at IS NOT NULL AS consumed
            FROM recovery_codes
            WHERE normalized_email = \(normalizedEmail) AND created_at > now() - interval '1 day'
            ORDER BY created_at DESC LIMIT 5
            """
        ).map { row in
            CodeRow(
                id: try row.decode("id"), salt: try row.decode("code_salt"),
                digest: try row.decode("code_digest"),
                attempts: try row.decode("attempts"), expired: try row.decode("expired"),
                consumed: try row.decode("consumed"))
        }
    }

    /// Uses a code; nil when it was used, expired or exhausted in the meantime.
    static func consumeCode(id: UUID, maxAttempts: Int, on db: some SQLExecutor) throws -> UUID? {
        try db.query(
            """
            UPDATE recovery_codes SET consumed_at = now()
            WHERE id = \(id) AND consumed_at IS NULL AND expires_at > now() AND attempts < \(maxAttempts)
            RETURNING account_id
            """
        ).first?.decode("account_id")
    }

    /// A wrong code counts against the address's live code (a no-op when there is none: the
    /// same round trip for an unknown address).
    static func countWrongCode(normalizedEmail: String, on db: some SQLExecutor) throws {
        try db.query(
            """
            UPDATE recovery_codes SET attempts = attempts + 1
            WHERE normalized_email = \(normalizedEmail) AND consumed_at IS NULL AND expires_at > now()
            """)
    }

    // MARK: - Recovery sessions

    static func tokenDigest(_ token: String) -> [UInt8] { SHA256.hash(data: Array(token.utf8)).bytes }

    /// Opens a recovery session and returns its cookie token (never stored, never logged).
    static func createSession(accountID: UUID, lifetimeSeconds: Int, on db: some SQLExecutor) throws -> String
    {
        let token = Base64URL.encode(SecureRandom.bytes(count: 32))
        try db.query(
            """
            INSERT INTO recovery_sessions (id, account_id, token_digest, expires_at)
            VALUES (\(UUID.random()), \(accountID), \(tokenDigest(token)),
                    now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
        return token
    }

    struct Session: Sendable, Equatable {
        var id: UUID
        var accountID: UUID
    }

    /// The live, unused recovery session of a cookie token.
    static func liveSession(token: String, on db: some SQLExecutor) throws -> Session? {
        guard !token.isEmpty, token.utf8.count <= 64 else { return nil }
        guard
            let row = try db.query(
                """
                SELECT id, account_id FROM recovery_sessions
                WHERE token_digest = \(tokenDigest(token)) AND completed_at IS NULL AND expires_at > now()
                """
            ).first
        else { return nil }
        return Session(id: try row.decode("id"), accountID: try row.decode("account_id"))
    }

    /// Marks the session used, inside the transaction of what it was used for; nil when it
    /// was used or expired meanwhile.
    static func completeSession(token: String, on db: some SQLExecutor) throws -> Session? {
        guard !token.isEmpty, token.utf8.count <= 64 else { return nil }
        guard
            let row = try db.query(
                """
                UPDATE recovery_sessions SET completed_at = now()
                WHERE token_digest = \(tokenDigest(token)) AND completed_at IS NULL AND expires_at > now()
                RETURNING id, account_id
                """
            ).first
        else { return nil }
        return Session(id: try row.decode("id"), accountID: try row.decode("account_id"))
    }

    static func createPasskeyChallenge(sessionID: UUID, lifetimeSeconds: Int, on db: some SQLExecutor) throws
        -> (id: UUID, challenge: [UInt8])
    {
        let id = UUID.random()
        let challenge = PasskeyStore.newChallenge()
        try db.query(
            """
            INSERT INTO recovery_passkey_challenges (id, recovery_session_id, challenge, expires_at)
            VALUES (\(id), \(sessionID), \(challenge), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
        return (id, challenge)
    }

    static func consumePasskeyChallenge(id: UUID, sessionID: UUID, on db: some SQLExecutor) throws -> [UInt8]?
    {
        try db.query(
            """
            UPDATE recovery_passkey_challenges SET consumed_at = now()
            WHERE id = \(id) AND recovery_session_id = \(sessionID) AND consumed_at IS NULL AND expires_at > now()
            RETURNING challenge
            """
        ).first?.decode("challenge")
    }

}
