import Foundation
import Postgres
import WebAuthnCore

/// What managing an account's passkeys reads and writes.
protocol PasskeyManagementStore {
    /// Runs `body` in one transaction; the store it passes uses only that transaction.
    func transaction<T>(_ body: (any PasskeyManagementStore) throws -> T) throws -> T

    func account(_ id: UUID) throws -> AccountSummary?
    func passkeys(accountID: UUID) throws -> [PasskeyRecord]

    func createRegistrationChallenge(id: UUID, challenge: [UInt8], accountID: UUID, lifetimeSeconds: Int)
        throws
    /// Uses a registration challenge issued to `accountID` once; nil when it is unknown,
    /// expired, used or another account's.
    func consumeRegistrationChallenge(id: UUID, accountID: UUID) throws -> (
        challenge: [UInt8], conditional: Bool
    )?

    /// Takes the account's row lock until the transaction ends (as a removal takes it first).
    func lockAccount(_ id: UUID) throws
    /// Whether the session is still live, held so until the transaction ends (`SessionStore.holdLive`).
    func holdSession(_ session: CurrentSession) throws -> Bool
    /// Throws `PasskeyStore.InsertError.credentialExists` when the credential id is taken.
    func insert(_ registration: VerifiedRegistration, id: UUID, accountID: UUID, name: String) throws
        -> PasskeyRecord
    /// False when the account has no passkey `id`.
    func rename(id: UUID, accountID: UUID, name: String) throws -> Bool

    /// Locks the account until the transaction ends, then counts its credentials: what
    /// `CredentialPolicy` decides a removal on. Only inside `transaction`.
    func lockedCredentials(accountID: UUID) throws -> (passkeys: Int, hasPassword: Bool)
    /// The account's linked upstream identities (also ways to sign in).
    func upstreamIdentities(accountID: UUID) throws -> Int
    func passkeyName(id: UUID, accountID: UUID) throws -> String?
    /// False when the account has no passkey `id`.
    func delete(id: UUID, accountID: UUID) throws -> Bool

    func record(_ event: AuditEvent) throws
}

struct PostgresPasskeyManagementStore: PasskeyManagementStore {
    let db: any SQLExecutor

    func transaction<T>(_ body: (any PasskeyManagementStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresPasskeyManagementStore(db: connection)) }
    }

    func account(_ id: UUID) throws -> AccountSummary? {
        try AccountStore.summary(accountID: id, on: db)
    }

    func passkeys(accountID: UUID) throws -> [PasskeyRecord] {
        try PasskeyStore.list(accountID: accountID, on: db)
    }

    func createRegistrationChallenge(id: UUID, challenge: [UInt8], accountID: UUID, lifetimeSeconds: Int)
        throws
    {
        try PasskeyStore.createRegistrationChallenge(
            id: id, challenge: challenge, accountID: accountID, conditional: false,
            lifetimeSeconds: lifetimeSeconds, on: db)
    }

    func consumeRegistrationChallenge(id: UUID, accountID: UUID) throws -> (
        challenge: [UInt8], conditional: Bool
    )? {
        try PasskeyStore.consumeRegistrationChallenge(id: id, accountID: accountID, on: db)
    }

    func lockAccount(_ id: UUID) throws {
        try AccountStore.lock(accountID: id, on: db)
    }

    func holdSession(_ session: CurrentSession) throws -> Bool {
        try SessionStore.holdLive(session, on: db)
    }

    func insert(_ registration: VerifiedRegistration, id: UUID, accountID: UUID, name: String) throws
        -> PasskeyRecord
    {
        try PasskeyStore.insert(registration, id: id, accountID: accountID, name: name, on: db)
    }

    func rename(id: UUID, accountID: UUID, name: String) throws -> Bool {
        try PasskeyStore.rename(id: id, accountID: accountID, name: name, on: db)
    }

    func lockedCredentials(accountID: UUID) throws -> (passkeys: Int, hasPassword: Bool) {
        // The lock first, the count after it in a statement of its own: a removal racing this
        // one waits for the lock and then counts what the other left.
        try AccountStore.lock(accountID: accountID, on: db)
        let passkeys: Int =
            try db.query("SELECT count(*) AS n FROM passkey_credentials WHERE account_id = \(accountID)")
            .first?.decode("n") ?? 0
        let hasPassword = try AccountStore.passwordHash(accountID: accountID, on: db) != nil
        return (passkeys, hasPassword)
    }

    func upstreamIdentities(accountID: UUID) throws -> Int {
        try UpstreamIdentityStore.count(accountID: accountID, on: db)
    }

    func passkeyName(id: UUID, accountID: UUID) throws -> String? {
        try db.query("SELECT name FROM passkey_credentials WHERE id = \(id) AND account_id = \(accountID)")
            .first?.decode("name")
    }

    func delete(id: UUID, accountID: UUID) throws -> Bool {
        try PasskeyStore.delete(id: id, accountID: accountID, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }
}
