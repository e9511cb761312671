import Foundation
import Testing

@testable import AuthServer

/// Accounts with a verified address, and the codes the development mailbox received.
enum Recovery {
    static let password = "a long passphrase"

    /// A password account whose address is verified, signed up (and so signed in) by `agent`;
    /// returns its email and id.
    @discardableResult
    static func verifiedAccount(
        _ app: TestApplication, email: String = TestAgent.uniqueEmail(), by agent: TestAgent? = nil
    ) throws -> (email: String, accountID: UUID) {
        let reply = try (agent ?? TestAgent(app)).signUp(email: email, password: password)
        #expect(reply.status == 201)
        let id = try #require(UUID(uuidString: reply.json["account_id"] as? String ?? ""))
        try app.sql("UPDATE account_emails SET verified_at = now() WHERE account_id = \(id)")
        return (email, id)
    }

    /// The recovery messages to `address` (sign-up also mails it a verification code).
    static func recoveryMails(_ app: TestApplication, to address: String) -> [OutgoingMail] {
        app.mailbox.received(to: address).filter { $0.subject.contains("recover") || $0.subject.contains("復旧") }
    }

    /// Mail leaves on another thread: wait (up to ten seconds) for `count` recovery messages to
    /// `address`.
    static func mails(_ app: TestApplication, to address: String, count: Int = 1) throws -> [OutgoingMail] {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let received = recoveryMails(app, to: address)
            if received.count >= count { return received }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Issue.record("no mail to \(address)")
        return recoveryMails(app, to: address)
    }

    /// The eight-digit code in a recovery message's body.
    static func code(in mail: OutgoingMail) -> String? {
        mail.text.firstMatch(of: /\b[0-9]{8}\b/).map { String($0.output) }
    }

    /// The newest code mailed to `address`; never in the subject, which the development log shows.
    static func code(_ app: TestApplication, to address: String, count: Int = 1) throws -> String {
        let mail = try #require(try mails(app, to: address, count: count).last)
        let code = try #require(Recovery.code(in: mail))
        #expect(!mail.subject.contains(code))
        return code
    }

    /// Starts and verifies a recovery: the agent then holds a recovery cookie.
    static func open(_ app: TestApplication, _ agent: TestAgent, email: String, mailsBefore: Int = 0) throws {
        #expect(try agent.post("/api/recovery/start", ["email": email]).status == 202)
        let code = try code(app, to: email, count: mailsBefore + 1)
        let verified = try agent.post("/api/recovery/verify", ["email": email, "code": code])
        #expect(verified.status == 200)
        #expect(agent.cookies["recovery"] != nil)
    }

    static func auditEvents(_ app: TestApplication, accountID: UUID) throws -> [(String, [String: String])] {
        try app.sql(
            "SELECT event, detail::text AS detail FROM audit_events WHERE account_id = \(accountID) ORDER BY id"
        ).map { row in
            let text: String = try row.decode("detail")
            let detail =
                (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: String] ?? [:]
            return (try row.decode("event"), detail)
        }
    }
}

/// A transport that is not the development mailbox (as SMTP would be).
struct DiscardingTransport: MailTransport {
    func deliver(_ mail: OutgoingMail) throws {}
}
