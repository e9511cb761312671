import Crypto
import Foundation
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// Sign-up must not tell whether an address already has an account, and is throttled.
@Suite("Sign-up: no account enumeration, throttled")
struct SignUpEnumerationTests {
    static func verifiedOwner(_ app: TestApplication) throws -> String {
        let email = TestAgent.uniqueEmail("owner")
        let owner = TestAgent(app)
        #expect(try owner.signUp(email: email).status == 201)
        let (code, _) = try verificationMail(app, to: email)
        #expect(try owner.post("/api/account/email/verify", ["code": code]).status == 200)
        return email
    }

    static func shape(_ reply: TestAgent.Reply) -> [String] {
        reply.json.keys.sorted() + reply.setCookies.map { String($0.prefix { $0 != "=" }) }.sorted()
    }

    /// The attacker signs up with an address to learn whether it has an account: a verified
    /// owner's address answers exactly as a new one, and only the owner hears of it.
    @Test func passwordSignUpDoesNotRevealAnExistingAccount() throws {
        let app = try TestApplication()
        let taken = try Self.verifiedOwner(app)
        let fresh = TestAgent.uniqueEmail("fresh")
        let newReply = try TestAgent(app).signUp(email: fresh)
        let takenReply = try TestAgent(app).signUp(email: "  " + taken.uppercased())
        #expect(takenReply.status == newReply.status)
        #expect(takenReply.status == 201)
        #expect(Self.shape(takenReply) == Self.shape(newReply))
        #expect(takenReply.setCookies.contains { $0.contains("HttpOnly") })
        // No code reaches the owner's mailbox for the newcomer; a notice does.
        let ownerMail = app.mailbox.received(to: taken)
        #expect(ownerMail.count == 2)
        let notice = try #require(ownerMail.last)
        #expect(!notice.text.contains("/verify-email?"))
        #expect(notice.text.contains("/recover"))
        // The newcomer's account never gets the address verified, and "resend" looks normal.
        let newcomer = TestAgent(app)
        _ = try newcomer.signUp(email: taken)
        let resend = try newcomer.post("/api/account/email/resend")
        #expect(resend.status == 429 || resend.status == 200)
        try app.sql("UPDATE email_verification_codes SET created_at = now() - interval '61 seconds'")
        #expect(try newcomer.post("/api/account/email/resend").status == 200)
        #expect(
            app.mailbox.received(to: taken).allSatisfy {
                !$0.text.contains("/verify-email?") || $0 == ownerMail[0]
            })
        #expect(try newcomer.send("GET", "/api/account").json["email_verified"] as? Bool == false)
        #expect(
            try count(
                app,
                "SELECT count(*) AS n FROM account_emails WHERE normalized_email = \(taken) AND verified_at IS NOT NULL"
            ) == 1)
    }

    @Test func theOwnersNoticeIsInTheLanguageOfTheSignUp() throws {
        let app = try TestApplication()
        let taken = try Self.verifiedOwner(app)
        let agent = TestAgent(app)
        let reply = try agent.send(
            "POST", "/api/signup/password",
            json: ["email": taken, "display_name": "山田", "password": "correct horse battery"],
            headers: [("X-CSRF-Token", try agent.prepareCSRF()), ("Accept-Language", "ja")])
        #expect(reply.status == 201)
        let notice = try #require(app.mailbox.received(to: taken).last)
        #expect(notice.subject.contains("アカウント作成"))
        #expect(notice.html.contains("<html lang=\"ja\">"))
        #expect(
            try count(
                app,
                "SELECT count(*) AS n FROM audit_events WHERE event = 'account.sign_up_for_taken_address'")
                == 1)
    }

    @Test func pageSignUpDoesNotRevealAnExistingAccount() throws {
        let app = try TestApplication()
        let taken = try Self.verifiedOwner(app)
        func form(_ email: String) throws -> TestAgent.Reply {
            try TestAgent(app).postForm(
                "/signup", [("email", email), ("display_name", "X"), ("password", "a long passphrase")])
        }
        let newReply = try form(TestAgent.uniqueEmail("fresh"))
        let takenReply = try form(taken)
        #expect(newReply.status == 303)
        #expect(takenReply.status == newReply.status)
        #expect(takenReply.header("Location") == newReply.header("Location"))
        #expect(Self.shape(takenReply) == Self.shape(newReply))
        #expect(app.mailbox.received(to: taken).count == 2)
    }

    @Test func passkeySignUpDoesNotRevealAnExistingAccount() throws {
        let app = try TestApplication()
        let taken = try Self.verifiedOwner(app)
        func passkeySignUp(_ email: String) throws -> TestAgent.Reply {
            let agent = TestAgent(app)
            let start = try agent.post("/api/passkeys/signup/start", ["email": email, "display_name": "P"])
            let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
            let credential = try SoftwareAuthenticator().serverRegistration(
                challenge: try Base64URL.decode(options.challenge)
            ).json()
            return try agent.postEncodable(
                "/api/passkeys/signup/finish",
                SignUpFinish(
                    registrationID: try #require(start.json["registration_id"] as? String), email: email,
                    displayName: "P", credential: credential))
        }
        let newReply = try passkeySignUp(TestAgent.uniqueEmail("fresh"))
        let takenReply = try passkeySignUp(taken.uppercased())
        #expect(newReply.status == 201)
        #expect(takenReply.status == newReply.status)
        #expect(Self.shape(takenReply) == Self.shape(newReply))
        let ownerMail = app.mailbox.received(to: taken)
        #expect(ownerMail.count == 2)
        #expect(ownerMail.last.map { !$0.text.contains("/verify-email?") } == true)
    }

    /// Sign-ups for one address, and from one client, are counted; past the limit the answer
    /// is 429 whether or not the address has an account.
    @Test func signUpIsThrottledPerAddressAndPerClient() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail("target")
        for _ in 0..<5 {
            #expect(try TestAgent(app).signUp(email: email).status == 201)
        }
        let before = try count(app, "SELECT count(*) AS n FROM accounts")
        let throttled = try TestAgent(app).signUp(email: email)
        #expect(throttled.status == 429)
        #expect(throttled.error == "too_many_requests")
        #expect(Int(throttled.header("Retry-After") ?? "") ?? 0 > 0)
        #expect(throttled.setCookies.isEmpty)
        #expect(try count(app, "SELECT count(*) AS n FROM accounts") == before)
        let page = try TestAgent(app).postForm(
            "/signup", [("email", email), ("display_name", "X"), ("password", "a long passphrase")])
        #expect(page.status == 429)
        #expect(page.header("Retry-After") != nil)

        // Per client: many addresses from one client address.
        try app.sql("UPDATE sign_up_attempts SET attempts = 100 WHERE scope = 'client'")
        let fromClient = try TestAgent(app).signUp(email: TestAgent.uniqueEmail("other"))
        #expect(fromClient.status == 429)
        #expect(fromClient.error == "too_many_requests")
    }
}
