import Foundation
import Postgres
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

/// A credential change asked for by a session while the owner changes the password, which ends
/// that session: the change checked its session (and the current password) before the owner's
/// change committed, and writes after it. It must not land: a thief's session that the owner
/// ended must not leave a passkey or a password of the thief's behind.
@Suite("Credential changes racing the end of their session")
struct SessionCredentialRaceTests {
    /// The attack: a thief signed in with the old password registers a passkey while the owner
    /// changes the password. The registration has checked the thief's session; the change ends
    /// that session and commits first.
    @Test func aPasskeyRegisteredDuringAPasswordChangeIsNotKept() throws {
        let app = try TestApplication()
        let (signedIn, account, _) = try Self.thief(app)
        // The agent is used by the registration's thread alone once it starts.
        nonisolated(unsafe) let thief = signedIn
        let registration = try thief.passkeyRegistration(try SoftwareAuthenticator())

        let (reply, waited) = try Self.duringOwnersChange(app, account: account, waitingOn: "%authentication_sessions%") {
            try thief.postEncodable("/api/passkeys/registration/finish", registration)
        }
        #expect(waited, "the registration stored its passkey without waiting for the change")
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        let passkeys = try app.sql("SELECT count(*) AS n FROM passkey_credentials WHERE account_id = \(account)")
        #expect(try passkeys.first?.decode("n", as: Int.self) == 0)
    }

    /// The attack: a thief who knows the old password changes it to one of the thief's while the
    /// owner changes it. The thief's request checked the old password before the owner's change
    /// committed, and wrote its own after it: the owner's change, and the end of the thief's
    /// session, were undone by a password only the thief knows.
    @Test func aPasswordChangeDuringTheOwnersChangeDoesNotReplaceIt() throws {
        let app = try TestApplication()
        let (signedIn, account, email) = try Self.thief(app)
        // The agent is used by the change's thread alone once it starts.
        nonisolated(unsafe) let thief = signedIn

        let (reply, waited) = try Self.duringOwnersChange(app, account: account, waitingOn: "%password_credentials%") {
            try thief.post(
                "/api/password", ["current_password": "the old passphrase", "new_password": "the thief's passphrase"])
        }
        #expect(waited, "the thief's change did not wait for the owner's")
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        #expect(try Self.holdsTheOwnersNewPassword(app, account: account))
        #expect(try TestAgent(app).signIn(email: email, password: "the thief's passphrase").status == 401)
    }

    /// The attack: a thief signed in with the old password removes the password while the owner
    /// changes it (the account has a passkey that has signed in). The removal checked nothing but
    /// its session, and deleted the owner's new password after the change committed.
    @Test func aPasswordRemovalDuringTheOwnersChangeDoesNotRemoveTheNewOne() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (owner, handle) = try PasskeyFlowTests.signedIn(app, email: email)
        let authenticator = try SoftwareAuthenticator()
        #expect(try owner.registerPasskey(authenticator).status == 201)
        #expect(try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle).status == 200)
        // The agent is used by the removal's thread alone once it starts.
        nonisolated(unsafe) let thief = TestAgent(app)
        #expect(try thief.signIn(email: email, password: "a long passphrase").status == 200)
        let account = try app.accountID(email: email)

        // Any table: the old code waited for the password's row, this one for the session's.
        let (reply, waited) = try Self.duringOwnersChange(app, account: account, waitingOn: "%") {
            try thief.send("DELETE", "/api/password")
        }
        #expect(waited, "the removal did not wait for the change")
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        #expect(try Self.holdsTheOwnersNewPassword(app, account: account))
    }

    /// The attack: a thief signed in with the old password deletes the account while the owner
    /// changes the password, which ends the thief's session. The deletion checked the session
    /// before the change committed and deleted the account after it.
    @Test func anAccountDeletionDuringTheOwnersChangeIsRefused() throws {
        let app = try TestApplication()
        let (signedIn, account, email) = try Self.thief(app)
        // The agent is used by the deletion's thread alone once it starts.
        nonisolated(unsafe) let thief = signedIn

        // Any table: the old code waited for the rows the change holds, this one for the session's.
        let (reply, waited) = try Self.duringOwnersChange(app, account: account, waitingOn: "%") {
            try thief.send("DELETE", "/api/account", json: ["email": email])
        }
        #expect(waited, "the deletion did not wait for the change")
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        #expect(try app.sql("SELECT 1 FROM accounts WHERE id = \(account)").count == 1)
        #expect(try Self.holdsTheOwnersNewPassword(app, account: account))
    }

    /// A thief signed in to a new account with its password, "the old passphrase".
    static func thief(_ app: TestApplication) throws -> (TestAgent, UUID, String) {
        let email = TestAgent.uniqueEmail()
        let thief = TestAgent(app)
        #expect(try thief.signUp(email: email, password: "the old passphrase").status == 201)
        return (thief, try app.accountID(email: email), email)
    }

    /// Whether the account's password is the one `duringOwnersChange` sets.
    static func holdsTheOwnersNewPassword(_ app: TestApplication, account: UUID) throws -> Bool {
        guard let hash = try AccountStore.passwordHash(accountID: account, on: app.database.pool) else { return false }
        return try TestApplication.hasher.verify("the new passphrase", against: hash).isValid
    }

    /// `request`'s reply, sent while the owner's password change is under way: the new password,
    /// "the new passphrase", and every session of the account ended, as the account page makes
    /// the change. It commits once a statement `LIKE pattern` waits for a lock (`waited`), or
    /// after 10 s when none does.
    static func duringOwnersChange(
        _ app: TestApplication, account: UUID, waitingOn pattern: String,
        _ request: @escaping @Sendable () throws -> TestAgent.Reply
    ) throws -> (reply: TestAgent.Reply, waited: Bool) {
        let change = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { change.close() }
        try change.query("BEGIN")
        try AccountStore.setPassword(
            accountID: account, hash: try TestApplication.hasher.hash("the new passphrase"), on: change)
        _ = try SignOutEverywhere.run(accountID: account, keep: nil, reason: .passwordChanged, on: change)
        let sent = InBackground(request)
        let waited = try app.lockWaiters(like: pattern)
        try change.query("COMMIT")
        return (try sent.reply(), waited)
    }
}
