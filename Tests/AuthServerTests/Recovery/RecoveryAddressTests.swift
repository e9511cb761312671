import Crypto
import Foundation
import Postgres
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// A recovery is proof of a mailbox, and only while that mailbox is one of the account's
/// verified addresses. The owner who moves the account to a new address (because the old
/// mailbox is no longer theirs), or who undoes a thief's move to the thief's address, must not
/// be recovered out of the account by a code or a recovery session that the address it left
/// obtained before.
@Suite("Account recovery: only by an address the account still holds")
struct RecoveryAddressTests {
    /// How a recovery is completed.
    enum Method: String, CaseIterable, Sendable { case password, passkey }

    /// The owner, signed in, with a verified address and a password.
    static func owner(_ app: TestApplication) throws -> (agent: TestAgent, email: String, accountID: UUID) {
        let agent = TestAgent(app)
        let (email, accountID) = try Recovery.verifiedAccount(app, by: agent)
        return (agent, email, accountID)
    }

    /// The signed-in `agent` moves its account to `newEmail` with the code mailed there.
    static func changeEmail(_ app: TestApplication, _ agent: TestAgent, to newEmail: String) throws {
        #expect(try agent.post("/api/account/email/change", ["email": newEmail]).status == 202)
        let mail = try #require(app.mailbox.received(to: newEmail).last)
        let code = try #require(
            mail.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first {
                $0.count == 6 && $0.allSatisfy(\.isNumber)
            })
        let confirmed = try agent.post("/api/account/email/change/confirm", ["code": code])
        #expect(confirmed.status == 200, "\(confirmed.status): \(confirmed.text)")
    }

    /// The attack: the thief, who reads the owner's old mailbox, asked for a code there. The
    /// owner moves the account to a new address; the thief then types the code.
    @Test func aCodeMailedToTheAddressTheAccountLeftOpensNoRecovery() throws {
        let app = try TestApplication()
        let (owner, email, _) = try Self.owner(app)
        let thief = TestAgent(app)
        #expect(try thief.post("/api/recovery/start", ["email": email]).status == 202)
        let code = try Recovery.code(app, to: email)

        try Self.changeEmail(app, owner, to: TestAgent.uniqueEmail("moved"))

        let verified = try thief.post("/api/recovery/verify", ["email": email, "code": code])
        #expect(verified.status == 400, "\(verified.status): \(verified.text)")
        #expect(verified.error == "invalid_code")
        #expect(thief.cookies["recovery"] == nil)
        #expect(try owner.send("GET", "/api/account").status == 200)
    }

    /// The attack: the thief typed the code before the owner moved the account, and completes
    /// the recovery after: by a new password, or by a passkey whose ceremony began before.
    @Test(arguments: Method.allCases)
    func aRecoveryOpenedByTheAddressTheAccountLeftCannotComplete(_ method: Method) throws {
        let app = try TestApplication()
        let (owner, email, accountID) = try Self.owner(app)
        let thief = TestAgent(app)
        try Recovery.open(app, thief, email: email)
        let start = try thief.post("/api/recovery/passkey/start")
        #expect(start.status == 200)

        try Self.changeEmail(app, owner, to: TestAgent.uniqueEmail("moved"))

        let reply: TestAgent.Reply
        switch method {
        case .password:
            reply = try thief.post("/api/recovery/password", ["new_password": "the thief's passphrase"])
        case .passkey:
            let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
            let credential = try SoftwareAuthenticator().serverRegistration(
                challenge: try Base64URL.decode(options.challenge)
            ).json()
            reply = try thief.postEncodable(
                "/api/recovery/passkey/finish",
                RegistrationFinish(
                    challengeID: start.json["challenge_id"] as? String ?? "", credential: credential))
        }
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        #expect(reply.error == "recovery_required")
        #expect(thief.cookies["session"] == nil)
        // The owner is still signed in, with the password and no passkey of the thief's.
        #expect(try owner.send("GET", "/api/account").status == 200)
        #expect(try app.count("SELECT count(*) FROM passkey_credentials WHERE account_id = \(accountID)") == 0)
        #expect(try app.auditEvents("recovery.completed", account: accountID) == 0)
        #expect(try thief.post("/api/recovery/passkey/start").error == "recovery_required")
    }

    /// `agent` completes its recovery by password while another transaction holds the account's
    /// row, taken by `lock`; once the request waits for that row, `then` runs in that transaction,
    /// which commits. The reply, and whether the request waited.
    static func completing(
        _ app: TestApplication, _ agent: TestAgent, whileHeld lock: PostgresQuery,
        then body: (PostgresConnection) throws -> Void
    ) throws -> (reply: TestAgent.Reply, waited: Bool) {
        let other = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { other.close() }
        try other.query("BEGIN")
        try other.query(lock)
        // The agent is used by the request's thread alone.
        nonisolated(unsafe) let agent = agent
        let request = InBackground {
            try agent.post("/api/recovery/password", ["new_password": "a passphrase of the recoverer"])
        }
        let waited = try app.lockWaiters(like: "SELECT id FROM accounts%")
        do {
            try body(other)
            try other.query("COMMIT")
        } catch {
            Issue.record("the other transaction failed: \(error)")
        }
        return (try request.reply(), waited)
    }

    /// The attack, timed: the thief's recovery completes while the owner's change of address is
    /// committing. The change holds the account's lock (as `EmailChangeFlow.confirm` and
    /// `undo` do); the recovery must wait for it and then find the address gone.
    @Test func aRecoveryCompletingWhileTheAddressChangesIsRefused() throws {
        let app = try TestApplication()
        let (owner, email, accountID) = try Self.owner(app)
        let thief = TestAgent(app)
        try Recovery.open(app, thief, email: email)
        let moved = TestAgent.uniqueEmail("moved")
        let (reply, waited) = try Self.completing(
            app, thief, whileHeld: "SELECT id FROM accounts WHERE id = \(accountID) FOR NO KEY UPDATE"
        ) { change in
            try change.query(
                """
                UPDATE account_emails SET email = \(moved), normalized_email = \(EmailAddress.normalize(moved))
                WHERE account_id = \(accountID)
                """)
        }
        #expect(waited, "the recovery completed without waiting for the account's lock")
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        #expect(try owner.send("GET", "/api/account").status == 200)
        #expect(try TestAgent(app).signIn(email: moved, password: Recovery.password).status == 200)
    }

    /// A recovery completing while the account is deleted: the deletion holds the account's
    /// row (`FOR UPDATE`) and deletes the recovery session by cascade. A recovery that had
    /// used its session before waiting for the account deadlocked with it, and PostgreSQL
    /// failed one of the two.
    @Test func aRecoveryCompletingWhileTheAccountIsDeletedDoesNotDeadlock() throws {
        let app = try TestApplication()
        let (_, email, accountID) = try Self.owner(app)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)
        var deleted = false
        let (reply, waited) = try Self.completing(
            app, agent, whileHeld: "SELECT id FROM accounts WHERE id = \(accountID) FOR UPDATE"
        ) { deletion in
            deleted = try AccountDeletion.run(accountID: accountID, anonymousID: UUID(), on: deletion) != nil
        }
        #expect(waited, "the recovery did not wait for the account's lock")
        #expect(deleted)
        #expect(reply.status == 401, "\(reply.status): \(reply.text)")
        #expect(try app.count("SELECT count(*) FROM accounts WHERE id = \(accountID)") == 0)
    }
}
