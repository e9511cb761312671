import Foundation
import Postgres

/// What re-authentication reads and writes: the account's password and passkeys, and the
/// one-time passkey challenges bound to the session that asked.
protocol ReauthenticationStore {
    /// Runs `body` in one transaction; the store it passes uses only that transaction.
    func transaction<T>(_ body: (any ReauthenticationStore) throws -> T) throws -> T

    func account(_ id: UUID) throws -> AccountSummary?
    func passwordHash(accountID: UUID) throws -> String?
    func passkeys(accountID: UUID) throws -> [PasskeyRecord]
    /// The passkey with this credential id, whichever account holds it, and its account's
    /// user handle.
    func passkey(credentialID: [UInt8]) throws -> (PasskeyRecord, userHandle: [UInt8])?
    func recordUse(passkeyID: UUID, signCount: UInt32, backedUp: Bool) throws

    func createChallenge(id: UUID, challenge: [UInt8], sessionID: UUID, lifetimeSeconds: Int) throws
    /// Uses the challenge once; nil when it is unknown, used, expired or another session's.
    func consumeChallenge(id: UUID, sessionID: UUID) throws -> [UInt8]?

    /// Moves the session's `auth_time` to now with `amr`; false when the session ended.
    func reauthenticate(_ session: CurrentSession, amr: [String]) throws -> Bool
    func record(_ event: AuditEvent) throws
}

struct PostgresReauthenticationStore: ReauthenticationStore {
    let db: any SQLExecutor

    func transaction<T>(_ body: (any ReauthenticationStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresReauthenticationStore(db: connection)) }
    }

    func account(_ id: UUID) throws -> AccountSummary? {
        try AccountStore.summary(accountID: id, on: db)
    }

    func passwordHash(accountID: UUID) throws -> String? {
        try AccountStore.passwordHash(accountID: accountID, on: db)
    }

    func passkeys(accountID: UUID) throws -> [PasskeyRecord] {
        try PasskeyStore.list(accountID: accountID, on: db)
    }

    func passkey(credentialID: [UInt8]) throws -> (PasskeyRecord, userHandle: [UInt8])? {
        guard let (record, userHandle, _) = try PasskeyStore.find(credentialID: credentialID, on: db) else {
            return nil
        }
        return (record, userHandle)
    }

    func recordUse(passkeyID: UUID, signCount: UInt32, backedUp: Bool) throws {
        try PasskeyStore.recordUse(id: passkeyID, signCount: signCount, backedUp: backedUp, on: db)
    }

    func createChallenge(id: UUID, challenge: [UInt8], sessionID: UUID, lifetimeSeconds: Int) throws {
        try db.query(
            """
            INSERT INTO reauthentication_challenges (id, session_id, challenge, expires_at)
            VALUES (\(id), \(sessionID), \(challenge), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func consumeChallenge(id: UUID, sessionID: UUID) throws -> [UInt8]? {
        try db.query(
            """
            UPDATE reauthentication_challenges SET consumed_at = now()
            WHERE id = \(id) AND session_id = \(sessionID) AND consumed_at IS NULL AND expires_at > now()
            RETURNING challenge
            """
        ).first?.decode("challenge")
    }

    func reauthenticate(_ session: CurrentSession, amr: [String]) throws -> Bool {
        try SessionStore.reauthenticate(session, amr: amr, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }
}
