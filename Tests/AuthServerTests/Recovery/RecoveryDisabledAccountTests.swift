import Foundation
import Testing

@testable import AuthServer

/// `users disable` stops every way into the account, recovery by mail included: the operator
/// may have disabled it because someone else reads its mailbox. A recovery of the disabled
/// account would set that someone's password (or passkey), which works once the operator
/// enables the account again.
@Suite("Account recovery of a disabled account")
struct RecoveryDisabledAccountTests {
    static func disable(_ app: TestApplication, _ email: String) throws {
        let disabled = try OperatorCLI(app).run(["users", "disable"], [email])
        #expect(disabled.status == 0, "\(disabled.error)")
    }

    /// The attack: the mailbox's reader asks for a code for the disabled account. The answer is
    /// the usual one, and no code is mailed.
    @Test func aDisabledAccountIsMailedNoCode() throws {
        let app = try TestApplication()
        let (email, accountID) = try Recovery.verifiedAccount(app)
        try Self.disable(app, email)

        let reader = TestAgent(app)
        let started = try reader.post("/api/recovery/start", ["email": email])
        let unknown = try TestAgent(app).post("/api/recovery/start", ["email": TestAgent.uniqueEmail("nobody")])
        #expect(started.status == 202)
        #expect(started.text == unknown.text)
        let events = try Recovery.auditEvents(app, accountID: accountID).filter { $0.0 == "recovery.started" }
        #expect(events.map(\.1) == [["code_sent": "false", "reason": "account_disabled"]])
        // Mail leaves on another thread: a code would be there by now.
        Thread.sleep(forTimeInterval: 0.5)
        #expect(Recovery.recoveryMails(app, to: email).isEmpty)
    }

    /// The attack: the reader had a code and a recovery session before the operator disabled
    /// the account, and uses them after. Once the account is enabled again, only the owner's
    /// password signs in.
    @Test func aCodeOrARecoveryFromBeforeTheAccountWasDisabledDoesNotRecoverIt() throws {
        let app = try TestApplication()
        let (email, accountID) = try Recovery.verifiedAccount(app)
        let reader = TestAgent(app)
        try Recovery.open(app, reader, email: email)
        #expect(try TestAgent(app).post("/api/recovery/start", ["email": email]).status == 202)
        let code = try Recovery.code(app, to: email, count: 2)
        try Self.disable(app, email)

        let verified = try TestAgent(app).post("/api/recovery/verify", ["email": email, "code": code])
        #expect(verified.status == 400, "\(verified.status): \(verified.text)")
        #expect(verified.error == "invalid_code")
        let completed = try reader.post("/api/recovery/password", ["new_password": "the reader's passphrase"])
        #expect(completed.status == 401, "\(completed.status): \(completed.text)")
        #expect(completed.error == "recovery_required")
        #expect(try app.auditEvents("recovery.completed", account: accountID) == 0)

        #expect(try OperatorCLI(app).run(["users", "enable"], [email]).status == 0)
        #expect(try TestAgent(app).signIn(email: email, password: "the reader's passphrase").status == 401)
        #expect(try TestAgent(app).signIn(email: email, password: Recovery.password).status == 200)
    }
}
