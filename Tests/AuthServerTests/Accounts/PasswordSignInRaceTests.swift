import Foundation
import Postgres
import Testing

@testable import AuthServer

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

        let change = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { change.close() }
        try change.query("BEGIN")
        try AccountStore.setPassword(
            accountID: account, hash: try TestApplication.hasher.hash("the new passphrase"), on: change)
        _ = try SignOutEverywhere.run(accountID: account, keep: nil, reason: .passwordChanged, on: change)
        // The agent is used by the sign-in's thread alone.
        nonisolated(unsafe) let agent = TestAgent(app)
        let signIn = InBackground { try agent.signIn(email: email, password: "the old passphrase") }
        #expect(
            try AccountDeletionTests.waitForLock(app, statement: "SELECT 1 FROM password_credentials", seconds: 10),
            "the sign-in started its session without waiting for the change")
        try change.query("COMMIT")
        let reply = try signIn.reply()
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        let live = try app.sql(
            "SELECT count(*) AS n FROM authentication_sessions WHERE account_id = \(account) AND revoked_at IS NULL")
        #expect(try live.first?.decode("n", as: Int.self) == 0)
    }
}
