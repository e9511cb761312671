import Foundation
import Postgres
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

/// A password sign-in under way while the password changes (a change, a removal, a recovery):
/// the sign-in read the old hash and hashes for a while; the change then ends every session
/// of the account. The session the sign-in starts must be refused, or ended by the change.
@Suite("Password sign-in racing a password change")
struct PasswordSignInRaceTests {
    /// The attack: someone who knows the old password keeps signing in; the owner changes the
    /// password while one of those sign-ins is between its check and its session. The change
    /// began first, so the sign-in waits for it and finds the password it checked gone.
    @Test func aSignInDuringAPasswordChangeStartsNoSessionThatOutlivesIt() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        #expect(try TestAgent(app).signUp(email: email, password: "the old passphrase").status == 201)
        let account = try app.accountID(email: email)

        // The agent is used by the sign-in's thread alone.
        nonisolated(unsafe) let agent = TestAgent(app)
        let (reply, waited) = try SessionCredentialRaceTests.duringOwnersChange(
            app, account: account, waitingOn: "SELECT 1 FROM password_credentials%"
        ) { try agent.signIn(email: email, password: "the old passphrase") }
        #expect(waited, "the sign-in started its session without waiting for the change")
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        let live = try app.sql(
            "SELECT count(*) AS n FROM authentication_sessions WHERE account_id = \(account) AND revoked_at IS NULL")
        #expect(try live.first?.decode("n", as: Int.self) == 0)
    }

    /// A sign-in that replaces an imported hash (here scrypt) writes its new hash only over
    /// the one it checked. The attack: someone who knows an imported account's old password
    /// signs in while the owner changes the password or removes it; the sign-in read the old
    /// hash before the change and wrote its Argon2id hash of the old password after it, so
    /// the old password came back and its session was started.
    @Test(arguments: [true, false])
    func aRehashDuringAPasswordChangeDoesNotBringTheOldPasswordBack(removed: Bool) throws {
        let app = try TestApplication()
        let (account, email) = try UsersCommandTests.importedAccount(app)
        let change = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { change.close() }
        try change.query("BEGIN")
        if removed {
            #expect(try AccountStore.deletePassword(accountID: account, on: change))
        } else {
            try AccountStore.setPassword(
                accountID: account, hash: try TestApplication.hasher.hash("the new passphrase"), on: change)
        }
        _ = try SignOutEverywhere.run(accountID: account, keep: nil, reason: .passwordChanged, on: change)
        // The agent is used by the sign-in's thread alone.
        nonisolated(unsafe) let agent = TestAgent(app)
        let signIn = InBackground { try agent.signIn(email: email, password: UsersCommandTests.importedPassword) }
        #expect(try app.lockWaiters(like: "%password_credentials%"), "the sign-in wrote its hash without waiting")
        try change.query("COMMIT")
        let reply = try signIn.reply()
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        let stored = try AccountStore.passwordHash(accountID: account, on: app.database.pool)
        if removed {
            #expect(stored == nil, "the removed password came back")
        } else {
            #expect(try SessionCredentialRaceTests.holdsTheOwnersNewPassword(app, account: account))
        }
        #expect(try TestAgent(app).signIn(email: email, password: UsersCommandTests.importedPassword).status == 401)
        let live = try app.sql(
            "SELECT count(*) AS n FROM authentication_sessions WHERE account_id = \(account) AND revoked_at IS NULL")
        #expect(try live.first?.decode("n", as: Int.self) == 0)
    }

    /// Two sign-ins with the right password both replace the imported hash: the second finds
    /// the first one's hash in place, checks the password against it, and signs in too.
    @Test func twoSignInsThatBothRehashBothSignIn() throws {
        let app = try TestApplication()
        let (account, email) = try UsersCommandTests.importedAccount(app)
        let hold = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { hold.close() }
        try hold.query("BEGIN")
        try hold.query("SELECT 1 FROM password_credentials WHERE account_id = \(account) FOR UPDATE")
        // Each agent is used by its sign-in's thread alone.
        nonisolated(unsafe) let first = TestAgent(app)
        nonisolated(unsafe) let second = TestAgent(app)
        let signIns = [
            InBackground { try first.signIn(email: email, password: UsersCommandTests.importedPassword) },
            InBackground { try second.signIn(email: email, password: UsersCommandTests.importedPassword) },
        ]
        #expect(try app.lockWaiters(like: "%password_credentials%", count: 2), "the two sign-ins did not both reach their rehash")
        try hold.query("COMMIT")
        for signIn in signIns {
            let reply = try signIn.reply()
            #expect(reply.status == 200, "\(reply.status): \(reply.text)")
        }
        let hash = try #require(try AccountStore.passwordHash(accountID: account, on: app.database.pool))
        #expect(hash.hasPrefix("$argon2id$"))
        let live = try app.sql(
            "SELECT count(*) AS n FROM authentication_sessions WHERE account_id = \(account) AND revoked_at IS NULL")
        #expect(try live.first?.decode("n", as: Int.self) == 2)
    }

    /// A password sign-in's session starts in one transaction: the password's row share-locked,
    /// then the session inserted, whose foreign key share-locks the account's key. A removal of
    /// the password under way takes the account's lock, then waits for the password's row. The
    /// account's lock must not stop the sign-in's foreign key check: the two would wait for each
    /// other until PostgreSQL broke the deadlock by failing one of them.
    @Test func aSignInUnderWayAndAPasswordRemovalDoNotDeadlock() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (signedIn, handle) = try PasskeyFlowTests.signedIn(app, email: email)
        let authenticator = try SoftwareAuthenticator()
        #expect(try signedIn.registerPasskey(authenticator).status == 201)
        #expect(try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle).status == 200)
        let account = try app.accountID(email: email)

        // The sign-in's statements, in the order it runs them.
        let signIn = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { signIn.close() }
        try signIn.query("BEGIN")
        try signIn.query("SELECT 1 FROM password_credentials WHERE account_id = \(account) FOR SHARE")
        // The agent is used by the removal's thread alone once it starts.
        nonisolated(unsafe) let owner = signedIn
        let removal = InBackground { try owner.send("DELETE", "/api/password") }
        #expect(try app.lockWaiters(like: "%password_credentials%"), "the removal did not wait")
        try signIn.query("SELECT 1 FROM accounts WHERE id = \(account) FOR KEY SHARE")
        try signIn.query("COMMIT")
        let reply = try removal.reply()
        #expect(reply.status == 204, "\(reply.status): \(reply.text)")
    }
}
