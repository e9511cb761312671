import Foundation
import Postgres

/// What a passkey sign-in reads and writes.
protocol PasskeySignInStore {
    /// Stores a one-time authentication challenge that expires after `lifetimeSeconds`.
    func insertChallenge(id: UUID, challenge: [UInt8], lifetimeSeconds: Int) throws
    /// Consumes the challenge (nil when unknown, expired or already used) and, in the same
    /// statement, finds the passkey with this credential id, its account's user handle and
    /// whether an operator disabled the account (nil credential id: no lookup).
    func consumeChallenge(id: UUID, findingPasskey credentialID: [UInt8]?) throws -> (
        challenge: [UInt8]?, passkey: FoundPasskey?
    )
    /// The passkey's counter (which only grows), backup state and last use.
    func recordUse(of passkeyID: UUID, signCount: UInt32, backedUp: Bool) throws
    func startSession(_ start: SessionStart) throws -> (token: String, session: CurrentSession)
    func record(_ event: AuditEvent) throws
    /// What the page tells the passkey provider after the sign-in: the account's email, its
    /// display name and the credential ids of every passkey it holds now.
    func signalDetails(accountID: UUID) throws -> (
        email: String, displayName: String, credentialIDs: [[UInt8]]
    )?
    /// Runs `body` in one transaction; the store it passes uses only that transaction's connection.
    func transaction<T>(_ body: (any PasskeySignInStore) throws -> T) throws -> T
}

/// A passkey found by its credential id, with what its account adds.
typealias FoundPasskey = (record: PasskeyRecord, userHandle: [UInt8], accountDisabled: Bool)

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
        challenge: [UInt8]?, passkey: FoundPasskey?
    ) {
        // One round trip: the challenge is consumed whatever the lookup finds.
        let rows = try db.query(
            """
            WITH challenge AS (
                UPDATE passkey_authentication_challenges SET consumed_at = now()
                WHERE id = \(id) AND consumed_at IS NULL AND expires_at > now()
                RETURNING challenge
            )
            SELECT (SELECT challenge FROM challenge) AS consumed_challenge, found.*
            FROM (SELECT 1) AS one
            LEFT JOIN (
                SELECT \(PasskeyStore.columns), a.webauthn_user_handle, a.disabled_at IS NOT NULL AS account_disabled
                FROM passkey_credentials JOIN accounts a ON a.id = passkey_credentials.account_id
                WHERE passkey_credentials.credential_id = \(credentialID)
            ) AS found ON true
            """)
        guard let row = rows.first else { return (nil, nil) }
        let challenge: [UInt8]? = try row.decode("consumed_challenge")
        guard try row.decode("id", as: UUID?.self) != nil else { return (challenge, nil) }
        let found: FoundPasskey = (
            try PasskeyStore.record(row), try row.decode("webauthn_user_handle"),
            try row.decode("account_disabled")
        )
        return (challenge, found)
    }

    func recordUse(of passkeyID: UUID, signCount: UInt32, backedUp: Bool) throws {
        try PasskeyStore.recordUse(id: passkeyID, signCount: signCount, backedUp: backedUp, on: db)
    }

    func startSession(_ start: SessionStart) throws -> (token: String, session: CurrentSession) {
        try sessions.start(start, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }

    func signalDetails(accountID: UUID) throws -> (
        email: String, displayName: String, credentialIDs: [[UInt8]]
    )? {
        // One statement: a row per passkey (one row with a NULL id when none is left), each
        // with the account's first address (the one AccountStore.summary shows) and name.
        let rows = try db.query(
            """
            SELECT a.display_name, e.email, c.credential_id
            FROM accounts a
            LEFT JOIN LATERAL (
                SELECT email FROM account_emails WHERE account_id = a.id ORDER BY created_at, id LIMIT 1
            ) e ON true
            LEFT JOIN passkey_credentials c ON c.account_id = a.id
            WHERE a.id = \(accountID)
            ORDER BY c.created_at, c.id
            """)
        guard let first = rows.first else { return nil }
        return (
            try first.decode("email", as: String?.self) ?? "", try first.decode("display_name"),
            try rows.compactMap { try $0.decode("credential_id", as: [UInt8]?.self) }
        )
    }

    func transaction<T>(_ body: (any PasskeySignInStore) throws -> T) throws -> T {
        try db.transaction { connection in
            try body(PostgresPasskeySignInStore(db: connection, sessions: sessions))
        }
    }
}
