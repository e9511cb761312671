import Foundation
import Postgres
import WebAuthnCore

/// What creating an account (with a password or a passkey) reads and writes.
protocol SignUpStore {
    /// Counts one sign-up for the address and the client (see `SignUpThrottle`).
    func countSignUp(normalizedEmail: String, client: String, windowSeconds: Int) throws -> [WindowCounter
        .Count]
    /// The account and its address, unverified (see `AccountStore.insertAccount`).
    func insertAccount(id: UUID, displayName: String, email: EmailAddress, userHandle: [UInt8]) throws
    func setPassword(accountID: UUID, hash: String) throws
    /// Reserves an account id and user handle for a passkey sign-up; no account is written.
    func insertRegistration(_ registration: PasskeyStore.AccountRegistration, lifetimeSeconds: Int) throws
    /// Marks a passkey sign-up completed; nil when unknown, expired or already completed.
    /// Run in the transaction that writes the account, so a failure later in it leaves the
    /// registration usable again.
    func completeRegistration(id: UUID) throws -> PasskeyStore.AccountRegistration?
    /// Stores the new passkey; `PasskeyStore.InsertError.credentialExists` when it is registered.
    func insertPasskey(_ registration: VerifiedRegistration, accountID: UUID, name: String) throws
    func startSession(_ start: SessionStart) throws -> (token: String, session: CurrentSession)
    func record(_ event: AuditEvent) throws
    /// Runs `body` in one transaction; the store it passes uses only that transaction's connection.
    func transaction<T>(_ body: (any SignUpStore) throws -> T) throws -> T
}

struct PostgresSignUpStore: SignUpStore {
    let db: any SQLExecutor
    let sessions: SessionStore

    func countSignUp(normalizedEmail: String, client: String, windowSeconds: Int) throws -> [WindowCounter
        .Count]
    {
        try WindowCounter.hit(
            .signUpAttempts, .init(scope: "email", subject: normalizedEmail),
            .init(scope: "client", subject: client),
            windowSeconds: windowSeconds, on: db)
    }

    func insertAccount(id: UUID, displayName: String, email: EmailAddress, userHandle: [UInt8]) throws {
        try AccountStore.insertAccount(
            id: id, displayName: displayName, email: email, userHandle: userHandle, on: db)
    }

    func setPassword(accountID: UUID, hash: String) throws {
        try AccountStore.setPassword(accountID: accountID, hash: hash, on: db)
    }

    func insertRegistration(_ registration: PasskeyStore.AccountRegistration, lifetimeSeconds: Int) throws {
        try db.query(
            """
            INSERT INTO passkey_account_registrations (id, prospective_account_id, user_handle, challenge, expires_at)
            VALUES (\(registration.id), \(registration.prospectiveAccountID), \(registration.userHandle),
                    \(registration.challenge), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func completeRegistration(id: UUID) throws -> PasskeyStore.AccountRegistration? {
        let rows = try db.query(
            """
            UPDATE passkey_account_registrations SET completed_at = now()
            WHERE id = \(id) AND completed_at IS NULL AND expires_at > now()
            RETURNING id, prospective_account_id, user_handle, challenge
            """)
        guard let row = rows.first else { return nil }
        return PasskeyStore.AccountRegistration(
            id: try row.decode("id"), prospectiveAccountID: try row.decode("prospective_account_id"),
            userHandle: try row.decode("user_handle"), challenge: try row.decode("challenge"))
    }

    func insertPasskey(_ registration: VerifiedRegistration, accountID: UUID, name: String) throws {
        _ = try PasskeyStore.insert(registration, accountID: accountID, name: name, on: db)
    }

    func startSession(_ start: SessionStart) throws -> (token: String, session: CurrentSession) {
        try sessions.start(start, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }

    func transaction<T>(_ body: (any SignUpStore) throws -> T) throws -> T {
        try db.transaction { connection in
            try body(PostgresSignUpStore(db: connection, sessions: sessions))
        }
    }
}
