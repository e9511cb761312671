import Foundation
import Postgres
import Testing

@testable import AuthServer

/// An email change asked for while the password changes: the change ends the account's other
/// sessions and every pending email change, whose link needs no session. A request that checked
/// its session before the change and stores its row after must not leave a change pending.
@Suite("Email change racing a password change")
struct EmailChangeRaceTests {
    /// The attack: a thief signed in to the account asks to move it to the thief's address while
    /// the owner changes the password. The request has checked the thief's session and waits for
    /// the account; the change ends that session and commits first.
    @Test func aRequestDuringAPasswordChangeLeavesNoChangePending() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        // The agent is used by the request's thread alone.
        nonisolated(unsafe) let thief = TestAgent(app)
        #expect(try thief.signUp(email: email, password: "the old passphrase").status == 201)
        let account = try app.accountID(email: email)

        let change = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { change.close() }
        try change.query("BEGIN")
        try change.query("SELECT id FROM accounts WHERE id = \(account) FOR UPDATE")
        let thiefAddress = TestAgent.uniqueEmail("thief")
        let request = InBackground { try thief.post("/api/account/email/change", ["email": thiefAddress]) }
        #expect(
            try AccountDeletionTests.waitForLock(app, statement: "SELECT id FROM accounts", seconds: 10),
            "the request stored its change without waiting for the account")
        try AccountStore.setPassword(
            accountID: account, hash: try TestApplication.hasher.hash("the new passphrase"), on: change)
        _ = try SignOutEverywhere.run(accountID: account, keep: nil, reason: .passwordChanged, on: change)
        try change.query("COMMIT")
        let reply = try request.reply()
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        let pending = try app.sql("SELECT count(*) AS n FROM email_changes WHERE account_id = \(account)")
        #expect(try pending.first?.decode("n", as: Int.self) == 0)
    }
}
