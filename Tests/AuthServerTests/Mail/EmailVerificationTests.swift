import Crypto
import Foundation
import OIDC
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// The code and the link token from the newest verification message to `address`.
func verificationCode(_ app: TestApplication, to address: String) throws -> (code: String, token: String) {
    let mail = try #require(app.mailbox.received(to: address).last { $0.text.contains("/verify-email?") })
    let code = try #require(
        mail.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first {
            $0.count == 6 && $0.allSatisfy(\.isNumber)
        })
    let link = try #require(
        mail.text.split(separator: "\n").first { $0.contains("/verify-email?") }.map(String.init))
    let items = URLComponents(string: link)?.queryItems ?? []
    #expect(items.first { $0.name == "code" } == nil)
    return (code, try #require(items.first { $0.name == "token" }?.value))
}

@Suite("Email verification: codes, attempts, resend, email_verified")
struct EmailVerificationTests {
    static func wrongCode(_ code: String) -> String {
        String(code.map { $0 == "9" ? "0" : Character(String(($0.wholeNumberValue ?? 0) + 1)) })
    }

    @Test func signUpSendsACodeThatVerifiesTheAddress() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        #expect(try agent.signUp(email: email).status == 201)
        let messages = app.mailbox.received(to: email)
        #expect(messages.count == 1)
        let mail = try #require(messages.first)
        #expect(mail.html.contains("<html lang=\"en\">"))
        let (code, _) = try verificationCode(app, to: email)
        #expect(!mail.subject.contains(code))
        #expect(try agent.send("GET", "/api/account").json["email_verified"] as? Bool == false)

        let reply = try agent.post("/api/account/email/verify", ["code": code])
        #expect(reply.status == 200)
        #expect(reply.json["email_verified"] as? Bool == true)
        #expect(try agent.send("GET", "/api/account").json["email_verified"] as? Bool == true)
        let events = try app.sql("SELECT count(*) AS n FROM audit_events WHERE event = 'email.verified'")
        #expect(try events.first?.decode("n", as: Int.self) == 1)
        // The code is never stored: only a salted digest.
        let rows = try app.sql("SELECT code_digest, code_salt FROM email_verification_codes")
        #expect(rows.count == 1)
        #expect(!app.logBuffer.text.contains(code))
    }

    @Test func aWrongCodeIsRejectedAndCounted() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let (code, _) = try verificationCode(app, to: email)
        let wrong = try agent.post("/api/account/email/verify", ["code": Self.wrongCode(code)])
        #expect(wrong.status == 400)
        #expect(wrong.error == "invalid_code")
        #expect(try agent.post("/api/account/email/verify", ["code": "abc"]).error == "invalid_code")
        let attempts = try app.sql("SELECT attempts FROM email_verification_codes").first?.decode(
            "attempts", as: Int.self)
        #expect(attempts == 2)
        #expect(try agent.post("/api/account/email/verify", ["code": code]).status == 200)
    }

    @Test func anExpiredCodeIsDead() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let (code, _) = try verificationCode(app, to: email)
        try app.sql("UPDATE email_verification_codes SET expires_at = now() - interval '1 second'")
        let reply = try agent.post("/api/account/email/verify", ["code": code])
        #expect(reply.status == 400)
        #expect(reply.error == "code_expired")
        #expect(try agent.send("GET", "/api/account").json["email_verified"] as? Bool == false)
    }

    @Test func aUsedCodeCannotBeReplayed() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let (code, token) = try verificationCode(app, to: email)
        #expect(try agent.post("/api/account/email/verify", ["code": code]).status == 200)
        let replay = try agent.post("/api/account/email/verify", ["code": code])
        #expect(replay.status == 400)
        #expect(replay.error == "invalid_code")
        // The link, opened again, says the address is verified rather than showing an error.
        let page = try TestAgent(app).send("GET", "/verify-email?token=\(token)")
        #expect(page.status == 200)
    }

    @Test func tooManyWrongAttemptsKillTheCode() throws {
        let app = try TestApplication { $0.emailVerification.maxAttempts = 3 }
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let (code, _) = try verificationCode(app, to: email)
        for _ in 0..<3 {
            #expect(
                try agent.post("/api/account/email/verify", ["code": Self.wrongCode(code)]).error
                    == "invalid_code")
        }
        let reply = try agent.post("/api/account/email/verify", ["code": code])
        #expect(reply.status == 400)
        #expect(reply.error == "code_expired")
    }

    @Test func resendIsThrottledAndReplacesTheOldCode() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let (first, _) = try verificationCode(app, to: email)
        let throttled = try agent.post("/api/account/email/resend")
        #expect(throttled.status == 429)
        #expect(throttled.error == "too_many_requests")
        #expect(throttled.header("Retry-After") != nil)
        #expect(app.mailbox.received(to: email).count == 1)

        try app.sql("UPDATE email_verification_codes SET created_at = now() - interval '61 seconds'")
        #expect(try agent.post("/api/account/email/resend").status == 200)
        #expect(app.mailbox.received(to: email).count == 2)
        let (second, _) = try verificationCode(app, to: email)
        if first != second {
            #expect(try agent.post("/api/account/email/verify", ["code": first]).error == "invalid_code")
        }
        #expect(try agent.post("/api/account/email/verify", ["code": second]).status == 200)
        #expect(try agent.post("/api/account/email/resend").error == "already_verified")
    }

    @Test func theAPINeedsASession() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        #expect(try agent.post("/api/account/email/verify", ["code": "123456"]).status == 401)
        #expect(try agent.post("/api/account/email/resend").status == 401)
    }

    @Test func theLinkVerifiesWithoutASessionInTheRequestLanguage() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        #expect(
            try agent.send(
                "POST", "/api/signup/password",
                json: ["email": email, "display_name": "山田 花子", "password": "correct horse battery"],
                headers: [("X-CSRF-Token", try agent.prepareCSRF()), ("Accept-Language", "ja,en;q=0.5")]
            ).status == 201)
        let mail = try #require(app.mailbox.received(to: email).first)
        #expect(mail.subject.contains("メールアドレスの確認"))
        #expect(mail.html.contains("<html lang=\"ja\">"))
        let (code, token) = try verificationCode(app, to: email)

        let stranger = TestAgent(app)
        let wrong = try stranger.send("GET", "/verify-email?token=\(String(token.reversed()))")
        #expect(wrong.status == 400)
        let page = try stranger.send("GET", "/verify-email?token=\(token)")
        #expect(page.status == 200)
        #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
        #expect(try agent.send("GET", "/api/account").json["email_verified"] as? Bool == true)
        #expect(try stranger.send("GET", "/verify-email?code=\(code)&id=not-a-uuid").status == 400)
    }

    @Test func theAccountPageAsksForTheCodeUntilVerified() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let (code, _) = try verificationCode(app, to: email)
        let id = try #require(
            try app.sql("SELECT id FROM email_verification_codes").first?.decode("id", as: UUID.self)
        ).uuidString.lowercased()
        let page = try agent.send("GET", "/account")
        #expect(page.text.contains(#"id="email-verify-form""#))
        #expect(page.text.contains(#"value="\#(id)""#))
        #expect(!page.text.contains(code))
        let resend = try agent.postForm("/account/email/resend", [])
        #expect(resend.status == 303)
        #expect(resend.header("Location") == "/account?email=too_soon")
        #expect(try agent.send("GET", "/verify-email?code=\(code)&id=\(id)").status == 200)
        #expect(!(try agent.send("GET", "/account").text.contains(#"id="email-verification""#)))
    }

    @Test func passkeySignUpSendsACodeToo() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        let start = try agent.post("/api/passkeys/signup/start", ["email": email, "display_name": "Pat"])
        let registrationID = try #require(start.json["registration_id"] as? String)
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        let authenticator = try SoftwareAuthenticator()
        let credential = try authenticator.serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        ).json()
        let finish = try agent.postEncodable(
            "/api/passkeys/signup/finish",
            SignUpFinish(
                registrationID: registrationID, email: email, displayName: "Pat", credential: credential))
        #expect(finish.status == 201)
        let (code, _) = try verificationCode(app, to: email)
        #expect(try agent.post("/api/account/email/verify", ["code": code]).status == 200)
    }

    @Test func emailVerifiedClaimFollowsTheAddress() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        // The ID token carries user claims when the `claims` parameter asks for them.
        let attempt = { AuthorizationAttempt(extra: [("claims", #"{"id_token":{"email_verified":null}}"#)]) }
        let (_, before) = try app.signedInFlow(attempt(), agent: agent)
        #expect(try app.claims(of: try #require(before.idToken))["email_verified"] == .bool(false))
        #expect(try app.userinfo(before.accessToken).json["email_verified"] as? Bool == false)

        let (code, _) = try verificationCode(app, to: email)
        #expect(try agent.post("/api/account/email/verify", ["code": code]).status == 200)
        let (_, after) = try app.signedInFlow(attempt(), agent: agent)
        #expect(try app.claims(of: try #require(after.idToken))["email_verified"] == .bool(true))
        #expect(try app.userinfo(after.accessToken).json["email_verified"] as? Bool == true)
    }
}
