import Crypto
import Foundation
import Postgres

/// What a passkey sign-in reads and writes.
protocol PasskeySignInStore {
    /// Stores a one-time authentication challenge that expires after `lifetimeSeconds`.
    func insertChallenge(id: UUID, challenge: [UInt8], lifetimeSeconds: Int) throws
    /// Consumes the challenge (nil when unknown, expired or already used) and, in the same
    /// statement, finds the passkey with this credential id and what its account adds (nil
    /// credential id: no lookup); `now` is the statement's time, the sign-in's.
    func consumeChallenge(id: UUID, findingPasskey credentialID: [UInt8]?) throws -> (
        challenge: [UInt8]?, passkey: FoundPasskey?, now: Date
    )
    /// The passkey's counter (which only grows), backup state and last use.
    func recordUse(of passkeyID: UUID, signCount: UInt32, backedUp: Bool) throws
    /// Starts the session at `authTime`, the sign-in's time (its insert is queued).
    func startSession(_ start: SessionStart, authTime: Date) throws -> (
        token: String, session: CurrentSession
    )
    func record(_ event: AuditEvent) throws
    /// Runs `body` in one transaction; the store it passes uses only that transaction's connection.
    func transaction<T>(_ body: (any PasskeySignInStore) throws -> T) throws -> T
}

/// A passkey found by its credential id, with what its account adds: whether an operator
/// disabled it, and what the page tells the passkey provider after the sign-in (the account's
/// email, its display name and the credential ids of every passkey it holds).
struct FoundPasskey {
    var record: PasskeyRecord
    var userHandle: [UInt8]
    var accountDisabled: Bool
    var email: String
    var displayName: String
    var credentialIDs: [[UInt8]]
}

struct PostgresPasskeySignInStore: PasskeySignInStore {
    let db: any SQLExecutor
    let sessions: SessionStore

    func insertChallenge(id: UUID, challenge: [UInt8], lifetimeSeconds: Int) throws {
        // Committed without waiting for the disk (as in OAuthStore): a challenge lost in a
        // PostgreSQL crash only makes that sign-in attempt fail.
        try db.query(
            """
            INSERT INTO passkey_authentication_challenges (id, challenge, expires_at)
            SELECT \(id), \(challenge), now() + make_interval(secs => \(lifetimeSeconds)::float8)
            FROM \(.asynchronousCommit)
            """)
    }

    func consumeChallenge(id: UUID, findingPasskey credentialID: [UInt8]?) throws -> (
        challenge: [UInt8]?, passkey: FoundPasskey?, now: Date
    ) {
        // One round trip: the challenge is consumed whatever the lookup finds. The account's
        // first address is the one AccountStore.summary shows.
        let rows = try db.query(
            """
            WITH challenge AS (
                UPDATE passkey_authentication_challenges SET consumed_at = now()
                WHERE id = \(id) AND consumed_at IS NULL AND expires_at > now()
                RETURNING challenge
            )
            SELECT (SELECT challenge FROM challenge) AS consumed_challenge, now() AS now, found.*
            FROM (SELECT 1) AS one
            LEFT JOIN (
                SELECT \(PasskeyStore.columns), a.webauthn_user_handle, a.disabled_at IS NOT NULL AS account_disabled,
                       a.display_name,
                       (SELECT email FROM account_emails WHERE account_id = a.id ORDER BY created_at, id LIMIT 1) AS email,
                       ARRAY(SELECT encode(c.credential_id, 'hex') FROM passkey_credentials c WHERE c.account_id = a.id
                             ORDER BY c.created_at, c.id) AS credential_ids
                FROM passkey_credentials JOIN accounts a ON a.id = passkey_credentials.account_id
                WHERE passkey_credentials.credential_id = \(credentialID)
            ) AS found ON true
            """)
        guard let row = rows.first else {
            throw PostgresError(kind: .other, detail: "challenge consumption returned no row")
        }
        let challenge: [UInt8]? = try row.decode("consumed_challenge")
        let now: Date = try row.decode("now")
        guard try row.decode("id", as: UUID?.self) != nil else { return (challenge, nil, now) }
        let found = FoundPasskey(
            record: try PasskeyStore.record(row), userHandle: try row.decode("webauthn_user_handle"),
            accountDisabled: try row.decode("account_disabled"),
            email: try row.decode("email", as: String?.self) ?? "",
            displayName: try row.decode("display_name"),
            credentialIDs: try row.decode("credential_ids", as: [String].self).compactMap(Hex.decode))
        return (challenge, found, now)
    }

    func recordUse(of passkeyID: UUID, signCount: UInt32, backedUp: Bool) throws {
        try PasskeyStore.recordUse(id: passkeyID, signCount: signCount, backedUp: backedUp, on: db)
    }

    func startSession(_ start: SessionStart, authTime: Date) throws -> (
        token: String, session: CurrentSession
    ) {
        try sessions.start(start, authTime: authTime, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }

    func transaction<T>(_ body: (any PasskeySignInStore) throws -> T) throws -> T {
        try db.transaction { connection in
            try body(PostgresPasskeySignInStore(db: connection, sessions: sessions))
        }
    }
}
