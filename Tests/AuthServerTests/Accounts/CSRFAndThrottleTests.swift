import Foundation
import Testing

@testable import AuthServer

@Suite("CSRF protection and sign-in throttling")
struct CSRFAndThrottleTests {
    @Test func jsonCallsWithoutTheTokenAreRefused() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        try agent.prepareCSRF()
        let missing = try agent.send(
            "POST", "/api/signup/password",
            json: ["email": "a@example.com", "display_name": "A", "password": "a long passphrase"],
            csrf: false)
        #expect(missing.status == 403)
        #expect(missing.error == "csrf_failed")
        agent.csrfToken = String(repeating: "A", count: 43)
        let wrong = try agent.post(
            "/api/signup/password",
            ["email": "a@example.com", "display_name": "A", "password": "a long passphrase"])
        #expect(wrong.status == 403)
        #expect(wrong.error == "csrf_failed")
        let rows = try app.sql("SELECT count(*) AS n FROM accounts")
        #expect(try rows.first?.decode("n", as: Int.self) == 0)
    }

    @Test func aForeignOriginIsRefusedEvenWithTheToken() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        try agent.prepareCSRF()
        agent.origin = "https://evil.example"
        let reply = try agent.post("/api/passkeys/authentication/start")
        #expect(reply.status == 403)
        #expect(reply.error == "csrf_failed")
    }

    @Test func formsWithoutTheTokenAreRefused() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        _ = try agent.send("GET", "/signup")
        let reply = try agent.postForm(
            "/signup",
            [("email", TestAgent.uniqueEmail()), ("display_name", "A"), ("password", "a long passphrase")],
            withCSRF: false)
        #expect(reply.status == 403)
        #expect(reply.setCookies.allSatisfy { !$0.hasPrefix("session=") })
        let signIn = try agent.postForm(
            "/signin", [("email", "a@example.com"), ("password", "x"), ("csrf_token", "nope")],
            withCSRF: false)
        #expect(signIn.status == 403)
    }

    @Test func failedSignInsPerAccountAreThrottledWithRetryAfter() throws {
        let app = try TestApplication {
            $0.signInThrottle = .init(accountMaxFailures: 3, addressMaxFailures: 100, windowSeconds: 600)
        }
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        for _ in 0..<3 {
            #expect(try TestAgent(app).signIn(email: email, password: "wrong password").status == 401)
        }
        let blocked = try TestAgent(app).signIn(email: email, password: "a long passphrase")
        #expect(blocked.status == 429)
        #expect(blocked.error == "too_many_attempts")
        let retryAfter = try #require(blocked.header("Retry-After").flatMap(Int.init))
        #expect(retryAfter > 0 && retryAfter <= 600)
        // An unknown address is throttled alike, so throttling reveals nothing either.
        let unknown = TestAgent.uniqueEmail("ghost")
        for _ in 0..<3 { _ = try TestAgent(app).signIn(email: unknown, password: "wrong password") }
        #expect(try TestAgent(app).signIn(email: unknown, password: "wrong password").status == 429)
        // The form answers 429 too.
        let form = try TestAgent(app).postForm(
            "/signin", [("email", email), ("password", "a long passphrase")])
        #expect(form.status == 429)
        #expect(form.header("Retry-After") != nil)
    }

    @Test func failedSignInsPerAddressAreThrottled() throws {
        let app = try TestApplication {
            $0.signInThrottle = .init(accountMaxFailures: 100, addressMaxFailures: 4, windowSeconds: 600)
        }
        for _ in 0..<4 {
            #expect(
                try TestAgent(app).signIn(email: TestAgent.uniqueEmail(), password: "wrong password").status
                    == 401)
        }
        let reply = try TestAgent(app).signIn(email: TestAgent.uniqueEmail(), password: "wrong password")
        #expect(reply.status == 429)
        #expect(reply.header("Retry-After") != nil)
    }

    /// Behind a trusted reverse proxy the client is the address in X-Forwarded-For, so one
    /// guesser is throttled without locking out everyone else behind the same proxy.
    @Test func behindATrustedProxyTheForwardedAddressIsThrottled() throws {
        let app = try TestApplication {
            $0.signInThrottle = .init(accountMaxFailures: 100, addressMaxFailures: 3, windowSeconds: 600)
            $0.http.trustedProxies = ["127.0.0.1", "::1"]
        }
        func attempt(from address: String) throws -> Int {
            let agent = TestAgent(app)
            try agent.prepareCSRF()
            return try agent.send(
                "POST", "/api/signin/password", json: ["email": TestAgent.uniqueEmail(), "password": "wrong password"],
                headers: [("X-Forwarded-For", "198.51.100.1, \(address)")]
            ).status
        }
        for _ in 0..<3 { #expect(try attempt(from: "203.0.113.7") == 401) }
        #expect(try attempt(from: "203.0.113.7") == 429)
        #expect(try attempt(from: "203.0.113.8") == 401)
        let subjects = try app.sql("SELECT subject FROM sign_in_failures WHERE scope = 'address'").map {
            try $0.decode("subject", as: String.self)
        }
        #expect(Set(subjects) == ["203.0.113.7", "203.0.113.8"])
    }

    @Test func aSuccessfulSignInResetsTheAccountCount() throws {
        let app = try TestApplication {
            $0.signInThrottle = .init(accountMaxFailures: 3, addressMaxFailures: 100, windowSeconds: 600)
        }
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        for _ in 0..<2 { _ = try TestAgent(app).signIn(email: email, password: "wrong password") }
        #expect(try TestAgent(app).signIn(email: email, password: "a long passphrase").status == 200)
        for _ in 0..<2 { _ = try TestAgent(app).signIn(email: email, password: "wrong password") }
        #expect(try TestAgent(app).signIn(email: email, password: "a long passphrase").status == 200)
    }
}
