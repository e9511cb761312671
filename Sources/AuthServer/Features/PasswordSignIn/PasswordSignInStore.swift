import Foundation
import Postgres

/// What a password sign-in reads and writes.
protocol PasswordSignInStore {
    /// Counts one password check for the account key and the client address before it runs;
    /// the seconds to wait when it must not run (see `SignInThrottle.admit`).
    func admitCheck(accountKey: String, clientAddress: String) throws -> Int?
    /// After a right password: the account key's count starts again (see `SignInThrottle`).
    func recordRightPassword(accountKey: String, clientAddress: String, accountID: UUID) throws
    /// The one account a sign-in with this address checks, and its password hash.
    func passwordCredential(normalizedEmail: String) throws -> PasswordCredential?
    func passwordMaySignIn(accountID: UUID, policy: Configuration.PasswordlessPolicy) throws -> Bool
    /// Writes `hash` over the hash the sign-in checked (`checked`); false when the stored hash
    /// is no longer that one: a change or a removal, which a sign-in must not undo, or another
    /// sign-in's rehash.
    func replacePasswordHash(accountID: UUID, hash: String, checked: String) throws -> Bool
    /// The account's password hash as stored now; nil without a password.
    func passwordHash(accountID: UUID) throws -> String?
    /// Starts the session, if the account's password is still the one the sign-in checked
    /// (`passwordHash`); nil when it changed or went meanwhile.
    func startSession(_ start: SessionStart, provenBy passwordHash: String) throws
        -> (token: String, session: CurrentSession)?
    /// Counts the password sign-in; true when the passkey prompt is due.
    func countPasswordSignIn(accountID: UUID, policy: Configuration.PasswordlessPolicy) throws -> Bool
    func account(_ accountID: UUID) throws -> AccountSummary?
    func passkeys(of accountID: UUID) throws -> [PasskeyRecord]
    /// Stores the conditional registration challenge of a passkey upgrade offer.
    func insertUpgradeChallenge(id: UUID, accountID: UUID, challenge: [UInt8], lifetimeSeconds: Int) throws
}

/// The account a password sign-in checks: its id, its password hash (nil without a
/// password), and whether an operator disabled it.
struct PasswordCredential: Sendable, Equatable {
    var accountID: UUID
    var passwordHash: String?
    var disabled: Bool
}

/// Every statement on its own (autocommit) but the session's start: a password sign-in holds
/// no transaction while it hashes.
struct PostgresPasswordSignInStore: PasswordSignInStore {
    let db: any SQLExecutor
    let sessions: SessionStore
    let throttle: SignInThrottle

    func admitCheck(accountKey: String, clientAddress: String) throws -> Int? {
        try throttle.admit(accountKey: accountKey, address: clientAddress)
    }

    func recordRightPassword(accountKey: String, clientAddress: String, accountID: UUID) throws {
        try throttle.recordSuccess(accountKey: accountKey, address: clientAddress, signedInAs: accountID)
    }

    func passwordCredential(normalizedEmail: String) throws -> PasswordCredential? {
        try AccountStore.passwordCredential(normalizedEmail: normalizedEmail, on: db).map {
            PasswordCredential(accountID: $0.accountID, passwordHash: $0.passwordHash, disabled: $0.disabled)
        }
    }

    func passwordMaySignIn(accountID: UUID, policy: Configuration.PasswordlessPolicy) throws -> Bool {
        try PasswordlessPolicyEnforcement.passwordMaySignIn(policy, accountID: accountID, on: db)
    }

    func replacePasswordHash(accountID: UUID, hash: String, checked: String) throws -> Bool {
        try db.query(
            """
            UPDATE password_credentials SET password_hash = \(hash), updated_at = now()
            WHERE account_id = \(accountID) AND password_hash = \(checked)
            """
        ).affectedRows == 1
    }

    func passwordHash(accountID: UUID) throws -> String? {
        try AccountStore.passwordHash(accountID: accountID, on: db)
    }

    /// The password row is share-locked until the session commits: a change under way (a new
    /// password, its removal, a recovery) is waited for and then refuses the sign-in; one that
    /// starts later waits for the session, and its sign-out everywhere ends it.
    func startSession(_ start: SessionStart, provenBy passwordHash: String) throws
        -> (token: String, session: CurrentSession)?
    {
        try db.transaction { connection in
            guard
                try connection.query(
                    """
                    SELECT 1 FROM password_credentials
                    WHERE account_id = \(start.accountID) AND password_hash = \(passwordHash) FOR SHARE
                    """
                ).first != nil
            else { return nil }
            return try sessions.start(start, on: connection)
        }
    }

    func countPasswordSignIn(accountID: UUID, policy: Configuration.PasswordlessPolicy) throws -> Bool {
        try PasswordlessPolicyEnforcement.countPasswordSignIn(policy, accountID: accountID, on: db)
    }

    func account(_ accountID: UUID) throws -> AccountSummary? {
        try AccountStore.summary(accountID: accountID, on: db)
    }

    func passkeys(of accountID: UUID) throws -> [PasskeyRecord] {
        try PasskeyStore.list(accountID: accountID, on: db)
    }

    func insertUpgradeChallenge(id: UUID, accountID: UUID, challenge: [UInt8], lifetimeSeconds: Int) throws {
        try PasskeyStore.createRegistrationChallenge(
            id: id, challenge: challenge, accountID: accountID, conditional: true,
            lifetimeSeconds: lifetimeSeconds, on: db)
    }
}

/// The reason an unavailable database (connection lost, shut down, no free connection) gave,
/// nil for any other error: what a flow needs to answer `busy` without knowing the driver.
func unavailableDatabaseReason(of error: any Error) -> String? {
    guard let error = error as? PostgresError, error.isUnavailable else { return nil }
    return "\(error.kind)"
}
