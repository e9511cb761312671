import Foundation
import Postgres
import Testing

@testable import AuthServer

@Suite("Password sign-up and sign-in")
struct PasswordSignInTests {
    @Test func formSignUpSetsASessionCookieAndRedirects() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        _ = try agent.send("GET", "/signup")
        #expect(agent.cookies["csrf"] != nil)
        let email = TestAgent.uniqueEmail()
        let reply = try agent.postForm(
            "/signup",
            [
                ("email", email), ("display_name", "Ada"), ("password", "a long passphrase"),
                ("return_to", "/authorize?client_id=x"),
            ])
        #expect(reply.status == 303)
        #expect(reply.header("Location") == "/authorize?client_id=x")
        let cookie = try #require(reply.setCookies.first { $0.hasPrefix("session=") })
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.contains("SameSite=Lax"))
        #expect(cookie.contains("Path=/"))
        #expect(!cookie.contains("Secure"))
        let account = try agent.send("GET", "/account")
        #expect(account.status == 200)
        #expect(account.text.contains(email))
    }

    @Test func formSignInWorksWithoutJavaScriptAndHonoursReturnTo() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        let agent = TestAgent(app)
        _ = try agent.send("GET", "/signin")
        let reply = try agent.postForm(
            "/signin",
            [
                ("email", email.uppercased()), ("password", "a long passphrase"),
                ("return_to", "/authorize?a=1"),
            ])
        #expect(reply.status == 303)
        #expect(reply.header("Location") == "/authorize?a=1")
        #expect(try agent.send("GET", "/api/account").json["email"] as? String == email)
    }

    @Test(arguments: [
        "//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "/ok\r\nX: y",
    ])
    func returnToOutsideTheSiteFallsBackToTheAccountPage(_ target: String) throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        let agent = TestAgent(app)
        let reply = try agent.postForm(
            "/signin", [("email", email), ("password", "a long passphrase"), ("return_to", target)])
        #expect(reply.status == 303)
        #expect(reply.header("Location") == "/account")
    }

    @Test func unknownEmailAndWrongPasswordAnswerTheSame() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        let wrong = try TestAgent(app).signIn(email: email, password: "not the password")
        let unknown = try TestAgent(app).signIn(
            email: TestAgent.uniqueEmail("nobody"), password: "not the password")
        #expect(wrong.status == 401)
        #expect(unknown.status == 401)
        #expect(wrong.text == unknown.text)
        #expect(wrong.error == "invalid_credentials")

        let formAgent = TestAgent(app)
        let formWrong = try formAgent.postForm("/signin", [("email", email), ("password", "nope nope")])
        let formUnknown = try formAgent.postForm(
            "/signin", [("email", "nobody@example.com"), ("password", "nope nope")])
        #expect(formWrong.status == 401 && formUnknown.status == 401)
        // The pages differ only in the prefilled address.
        #expect(
            formWrong.text.replacingOccurrences(of: email, with: "X")
                == formUnknown.text.replacingOccurrences(of: "nobody@example.com", with: "X"))
        #expect(formWrong.text.contains("role=\"alert\""))
    }

    @Test func passwordsAndTokensNeverReachTheLog() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let agent = TestAgent(app)
        let reply = try agent.signUp(email: email, password: "secret passphrase 123")
        _ = try TestAgent(app).signIn(email: email, password: "secret passphrase 123")
        _ = try TestAgent(app).signIn(email: email, password: "wrong secret 456")
        let token = try #require(agent.cookies["session"])
        let log = app.logBuffer.text
        #expect(reply.status == 201)
        #expect(log.contains("signin.password"))
        #expect(!log.contains("secret passphrase 123"))
        #expect(!log.contains("wrong secret 456"))
        #expect(!log.contains(token))
    }

    /// A second sign-up with an address (compared trimmed and case-insensitively) is not
    /// refused, which would reveal the account: it creates an account holding the address
    /// unverified. See SignUpEnumerationTests.
    @Test func duplicateEmailIsNotRevealed() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        #expect(try TestAgent(app).signUp(email: email).status == 201)
        let again = try TestAgent(app).signUp(email: "  " + email.uppercased())
        #expect(again.status == 201)
        let form = try TestAgent(app).postForm(
            "/signup", [("email", email), ("display_name", "X"), ("password", "a long passphrase")])
        #expect(form.status == 303)
        #expect(
            try app.sql("SELECT count(*) AS n FROM account_emails WHERE normalized_email = \(email)").first?
                .decode("n", as: Int.self) == 3)
    }

    @Test(arguments: [("", "weak_password"), ("short", "weak_password"), ("aaaaaaaaaaaa", "weak_password")])
    func weakPasswordsAreRefused(_ password: String, _ code: String) throws {
        let app = try TestApplication()
        let reply = try TestAgent(app).signUp(email: TestAgent.uniqueEmail(), password: password)
        #expect(reply.status == 400)
        #expect(reply.error == code)
    }

    @Test func passwordSignInOffersTheConditionalUpgrade() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        let reply = try TestAgent(app).signIn(email: email, password: "a long passphrase")
        #expect(reply.status == 200)
        let upgrade = try #require(reply.json["passkey_upgrade"] as? [String: Any])
        let challengeID = try #require(upgrade["challenge_id"] as? String)
        let rows = try app.sql(
            "SELECT conditional, expires_at < now() + interval '5 minutes' AS short FROM passkey_registration_challenges WHERE id = \(try #require(UUID(uuidString: challengeID)))"
        )
        #expect(try rows.first?.decode("conditional", as: Bool.self) == true)
        #expect(try rows.first?.decode("short", as: Bool.self) == true)
    }

    @Test func sessionCookieUsesHostPrefixAndSecureUnderHTTPS() throws {
        let app = try TestApplication { $0.issuer = "https://id.example.com" }
        let agent = TestAgent(app)
        let page = try agent.send("GET", "/signin")
        let csrfCookie = try #require(page.setCookies.first)
        #expect(csrfCookie.hasPrefix("__Host-csrf="))
        #expect(csrfCookie.contains("Secure"))
        let reply = try agent.signUp(email: TestAgent.uniqueEmail())
        #expect(reply.status == 201)
        let cookie = try #require(reply.setCookies.first { $0.hasPrefix("__Host-session=") })
        #expect(cookie.contains("; Secure"))
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.contains("Path=/"))
        #expect(!cookie.contains("Domain"))
        // The token is its time (12 hex digits), then 256 drawn bits, and only its digest is stored.
        let token = String(cookie.dropFirst("__Host-session=".count).prefix { $0 != ";" })
        #expect(token.count == 12 + 43)
        let stored = try app.sql(
            "SELECT count(*) AS n FROM authentication_sessions WHERE token_digest = \(SessionStore.digest(token))"
        )
        #expect(try stored.first?.decode("n", as: Int.self) == 1)
        let plain = try app.sql(
            "SELECT count(*) AS n FROM authentication_sessions WHERE encode(token_digest, 'escape') LIKE \("%" + token + "%")"
        )
        #expect(try plain.first?.decode("n", as: Int.self) == 0)
    }
}
