import Crypto
import Foundation
import Postgres
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

@Suite("Account recovery")
struct RecoveryTests {
    @Test func recoveryByPasswordSignsInAndReplacesThePassword() throws {
        let app = try TestApplication()
        let (email, accountID) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)

        let reply = try agent.post("/api/recovery/password", ["new_password": "a brand new passphrase"])
        #expect(reply.status == 200)
        #expect(reply.json["account_id"] as? String == accountID.uuidString.lowercased())
        #expect(agent.cookies["recovery"] == nil)
        #expect(try agent.send("GET", "/api/account").json["email"] as? String == email)

        #expect(try TestAgent(app).signIn(email: email, password: Recovery.password).status == 401)
        #expect(try TestAgent(app).signIn(email: email, password: "a brand new passphrase").status == 200)

        let events = try Recovery.auditEvents(app, accountID: accountID)
        #expect(events.contains { $0.0 == "recovery.started" })
        #expect(events.contains { $0.0 == "password.reset" })
        #expect(events.contains { $0.0 == "recovery.completed" && $0.1["method"] == "password" })
        let notice = try Recovery.mails(app, to: email, count: 2)
        #expect(notice.last?.subject.contains("was recovered") == true)
        #expect(!app.logBuffer.text.contains(try #require(Recovery.code(in: notice[0]))))
    }

    @Test func recoveryByPasskeyRegistersItAndItSignsIn() throws {
        let app = try TestApplication()
        let (email, accountID) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)

        let start = try agent.post("/api/recovery/passkey/start")
        #expect(start.status == 200)
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        #expect(options.authenticatorSelection?.userVerification == .required)
        let authenticator = try SoftwareAuthenticator()
        let credential = try authenticator.serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        )
        .json()
        let finish = try agent.postEncodable(
            "/api/recovery/passkey/finish",
            RegistrationFinish(
                challengeID: start.json["challenge_id"] as? String ?? "", credential: credential))
        #expect(finish.status == 200)
        #expect(try agent.send("GET", "/api/passkeys").json["passkeys"] as? [Any] != nil)
        #expect(agent.cookies["recovery"] == nil)

        let handle: [UInt8] = try #require(
            try app.sql("SELECT webauthn_user_handle FROM accounts WHERE id = \(accountID)").first?.decode(
                "webauthn_user_handle"))
        #expect(try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle).status == 200)

        let events = try Recovery.auditEvents(app, accountID: accountID)
        #expect(events.contains { $0.0 == "passkey.added" && $0.1["ceremony"] == "recovery" })
        #expect(events.contains { $0.0 == "recovery.completed" && $0.1["method"] == "passkey" })
        #expect(try Recovery.mails(app, to: email, count: 2).last?.subject.contains("was recovered") == true)
    }

    @Test func recoveryPasskeyNeedsUserPresenceAndVerification() throws {
        let app = try TestApplication()
        let (email, _) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)
        for (up, uv) in [(false, true), (true, false)] {
            let start = try agent.post("/api/recovery/passkey/start")
            let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
            let credential = try SoftwareAuthenticator().serverRegistration(
                challenge: try Base64URL.decode(options.challenge)
            ).flags(up: up, uv: uv).json()
            let finish = try agent.postEncodable(
                "/api/recovery/passkey/finish",
                RegistrationFinish(
                    challengeID: start.json["challenge_id"] as? String ?? "", credential: credential))
            #expect(finish.status == 400)
            #expect(finish.error == "passkey_verification_failed")
        }
        // A failed ceremony leaves the recovery usable.
        #expect(
            try agent.post("/api/recovery/password", ["new_password": "another passphrase"]).status == 200)
    }

    @Test func unknownAndUnverifiedAddressesAreAnsweredLikeAKnownOne() throws {
        let app = try TestApplication()
        let (known, _) = try Recovery.verifiedAccount(app)
        let unverified = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: unverified)
        let unknown = TestAgent.uniqueEmail()
        let replies = try [known, unverified, unknown].map { email in
            try TestAgent(app).post("/api/recovery/start", ["email": email])
        }
        for reply in replies {
            #expect(reply.status == 202)
            #expect(reply.response.body == replies[0].response.body)
        }
        _ = try Recovery.mails(app, to: known)
        #expect(Recovery.recoveryMails(app, to: unverified).isEmpty)
        #expect(app.mailbox.received(to: unknown).isEmpty)

        // An unknown address and a wrong code get the same answer.
        let wrong = try TestAgent(app).post("/api/recovery/verify", ["email": known, "code": "00000000"])
        let none = try TestAgent(app).post("/api/recovery/verify", ["email": unknown, "code": "00000000"])
        #expect(wrong.status == 400)
        #expect(wrong.error == "invalid_code")
        #expect(none.status == wrong.status)
        #expect(none.response.body == wrong.response.body)
        let started = try app.sql(
            "SELECT count(*) AS n FROM audit_events WHERE event = 'recovery.started' AND account_id IS NULL")
        #expect(try started.first?.decode("n", as: Int.self) == 0)
    }

    @Test func wrongExpiredAndReplayedCodes() throws {
        let app = try TestApplication()
        let (email, _) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        #expect(try agent.post("/api/recovery/start", ["email": email]).status == 202)
        let code = try Recovery.code(app, to: email)
        let wrongCode = code == "12345678" ? "87654321" : "12345678"
        let wrong = try agent.post("/api/recovery/verify", ["email": email, "code": wrongCode])
        #expect(wrong.status == 400)
        #expect(wrong.error == "invalid_code")
        #expect(
            try agent.post("/api/recovery/verify", ["email": email, "code": "not a code"]).error
                == "invalid_code")

        // Expired.
        try app.sql(
            "UPDATE recovery_codes SET expires_at = now() - interval '1 second' WHERE normalized_email = \(email)"
        )
        let expired = try agent.post("/api/recovery/verify", ["email": email, "code": code])
        #expect(expired.status == 400)
        #expect(expired.error == "code_expired")

        // A new code works once; a replay and the superseded code are invalid.
        #expect(try agent.post("/api/recovery/start", ["email": email]).status == 202)
        let fresh = try Recovery.code(app, to: email, count: 2)
        let spaced = String(fresh.prefix(4)) + " " + String(fresh.suffix(4))
        #expect(
            try agent.post("/api/recovery/verify", ["email": email.uppercased(), "code": spaced]).status
                == 200)
        let replay = try TestAgent(app).post("/api/recovery/verify", ["email": email, "code": fresh])
        #expect(replay.status == 400)
        #expect(replay.error == "invalid_code")
    }

    @Test func aCodeStopsWorkingAfterTheMaximumOfWrongAttempts() throws {
        let app = try TestApplication { $0.recovery.maxAttempts = 3 }
        let (email, _) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        #expect(try agent.post("/api/recovery/start", ["email": email]).status == 202)
        let code = try Recovery.code(app, to: email)
        let wrongCode = code == "12345678" ? "87654321" : "12345678"
        for _ in 0..<3 {
            #expect(
                try agent.post("/api/recovery/verify", ["email": email, "code": wrongCode]).error
                    == "invalid_code")
        }
        #expect(
            try agent.post("/api/recovery/verify", ["email": email, "code": code]).error == "invalid_code")
    }

    @Test func startAndVerifyAreThrottledPerAddress() throws {
        let app = try TestApplication {
            $0.recovery.startMaxPerEmail = 2
            $0.recovery.verifyMaxPerEmail = 2
        }
        let email = TestAgent.uniqueEmail()  // no account: throttled all the same
        let agent = TestAgent(app)
        #expect(try agent.post("/api/recovery/start", ["email": email]).status == 202)
        #expect(try agent.post("/api/recovery/start", ["email": email]).status == 202)
        let throttled = try agent.post("/api/recovery/start", ["email": email.uppercased()])
        #expect(throttled.status == 429)
        #expect(throttled.error == "too_many_attempts")
        #expect(throttled.header("Retry-After") != nil)
        #expect(try agent.post("/api/recovery/start", ["email": TestAgent.uniqueEmail()]).status == 202)

        for _ in 0..<2 {
            #expect(
                try agent.post("/api/recovery/verify", ["email": email, "code": "11111111"]).status == 400)
        }
        #expect(try agent.post("/api/recovery/verify", ["email": email, "code": "11111111"]).status == 429)
    }

    @Test func startAndVerifyAreThrottledPerClient() throws {
        let app = try TestApplication {
            $0.recovery.startMaxPerClient = 3
            $0.recovery.verifyMaxPerClient = 3
        }
        let agent = TestAgent(app)
        for _ in 0..<3 {
            #expect(try agent.post("/api/recovery/start", ["email": TestAgent.uniqueEmail()]).status == 202)
        }
        #expect(try agent.post("/api/recovery/start", ["email": TestAgent.uniqueEmail()]).status == 429)
        for _ in 0..<3 {
            let reply = try agent.post(
                "/api/recovery/verify", ["email": TestAgent.uniqueEmail(), "code": "11111111"])
            #expect(reply.status == 400)
        }
        #expect(
            try agent.post("/api/recovery/verify", ["email": TestAgent.uniqueEmail(), "code": "11111111"])
                .status == 429)
    }

    @Test func theRecoveryCookieIsRefusedEverywhereElseAndWorksOnce() throws {
        let app = try TestApplication()
        let (email, _) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)
        let token = try #require(agent.cookies["recovery"])
        #expect(agent.cookies["session"] == nil)

        #expect(try agent.send("GET", "/api/account").status == 401)
        #expect(try agent.send("GET", "/api/passkeys").status == 401)
        #expect(try agent.send("GET", "/api/sessions").status == 401)
        #expect(try agent.post("/api/passkeys/registration/start").status == 401)
        #expect(try agent.post("/api/password", ["new_password": "sneaky passphrase"]).status == 401)
        #expect(try agent.post("/api/recovery/end-other-sessions").status == 401)
        #expect(try agent.send("GET", "/account").header("Location")?.hasPrefix("/signin") == true)

        // Presented as a session cookie, the token is nobody.
        let impostor = TestAgent(app)
        impostor.cookies["session"] = token
        #expect(try impostor.send("GET", "/api/account").status == 401)

        #expect(try agent.post("/api/recovery/password", ["new_password": "short"]).error == "weak_password")
        #expect(try agent.post("/api/recovery/password", ["new_password": "a new passphrase"]).status == 200)
        let again = TestAgent(app)
        again.cookies["recovery"] = token
        let reused = try again.post("/api/recovery/password", ["new_password": "yet another passphrase"])
        #expect(reused.status == 401)
        #expect(reused.error == "recovery_required")
        #expect(try again.post("/api/recovery/passkey/start").error == "recovery_required")
    }

    @Test func anExpiredRecoverySessionIsRefused() throws {
        let app = try TestApplication()
        let (email, _) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)
        try app.sql("UPDATE recovery_sessions SET expires_at = now() - interval '1 second'")
        #expect(
            try agent.post("/api/recovery/password", ["new_password": "a new passphrase"]).error
                == "recovery_required")
    }

    @Test func otherSessionsEndOnRequest() throws {
        let app = try TestApplication()
        let (email, accountID) = try Recovery.verifiedAccount(app)
        let others = [TestAgent(app), TestAgent(app)]
        for other in others {
            #expect(try other.signIn(email: email, password: Recovery.password).status == 200)
        }
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)
        // Completing the recovery already ends the sign-up's session and the two others.
        #expect(try agent.post("/api/recovery/password", ["new_password": "a new passphrase"]).status == 200)
        for other in others {
            #expect(try other.send("GET", "/api/account").status == 401)
        }
        var events = try Recovery.auditEvents(app, accountID: accountID)
        #expect(events.contains { $0.0 == "recovery.completed" && $0.1["sessions_revoked"] == "3" })
        // "Sign out everywhere else" then finds none left; a session started since ends.
        let later = TestAgent(app)
        #expect(try later.signIn(email: email, password: "a new passphrase").status == 200)
        let ended = try agent.post("/api/recovery/end-other-sessions")
        #expect(ended.status == 200)
        #expect(ended.json["revoked"] as? Int == 1)
        #expect(try later.send("GET", "/api/account").status == 401)
        #expect(try agent.send("GET", "/api/account").status == 200)
        events = try Recovery.auditEvents(app, accountID: accountID)
        #expect(events.contains { $0.0 == "session.revoked" && $0.1["count"] == "1" })
    }

    @Test func theDevelopmentMailboxPageShowsMessagesNewestFirstEscaped() throws {
        let app = try TestApplication()
        try app.mailbox.deliver(OutgoingMail(to: "a@example.com", subject: "first", text: "one", html: ""))
        try app.mailbox.deliver(
            OutgoingMail(to: "b@example.com", subject: "<b>second</b>", text: "two & <i>", html: ""))
        let page = try TestAgent(app).send("GET", "/dev/mail")
        #expect(page.status == 200)
        #expect(
            page.text.contains(
                "<article class=\"mail\" data-to=\"b@example.com\"><h2 class=\"subject\">&lt;b&gt;second&lt;/b&gt;</h2><pre class=\"text\">two &amp; &lt;i&gt;</pre></article>"
            ))
        let first = try #require(page.text.range(of: "data-to=\"a@example.com\""))
        let second = try #require(page.text.range(of: "data-to=\"b@example.com\""))
        #expect(second.lowerBound < first.lowerBound)

        let production = try TestApplication(mailTransport: DiscardingTransport())
        #expect(try TestAgent(production).send("GET", "/dev/mail").status == 404)
    }

    @Test func theSignInPageLinksToRecoveryInBothLanguages() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let english = try agent.send("GET", "/signin")
        #expect(english.text.contains("href=\"/recover\""))
        #expect(english.text.contains("Can&#39;t sign in?") || english.text.contains("Can't sign in?"))
        let japanese = try agent.send("GET", "/recover?ui_locales=ja")
        #expect(japanese.status == 200)
        #expect(japanese.text.contains("アカウントの復旧"))
        #expect(japanese.text.contains("/static/js/recover.js"))
        #expect(!japanese.text.contains("<script>"))
    }

    @Test func oldRecoveryRowsArePurged() throws {
        let app = try TestApplication()
        let (email, _) = try Recovery.verifiedAccount(app)
        try Recovery.open(app, TestAgent(app), email: email)
        #expect(try TestAgent(app).post("/api/recovery/start", ["email": email]).status == 202)
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        func count(_ table: String) throws -> Int {
            try app.sql(PostgresQuery(unsafeSQL: "SELECT count(*) AS n FROM " + table)).first?.decode("n")
                ?? -1
        }
        #expect(try count("recovery_codes") == 2)
        #expect(try count("recovery_sessions") == 1)
        try app.sql("UPDATE recovery_codes SET created_at = now() - interval '3 days'")
        try app.sql("UPDATE recovery_sessions SET expires_at = now() - interval '2 days'")
        try app.sql("UPDATE recovery_attempts SET window_started_at = now() - interval '3 days'")
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        #expect(try count("recovery_codes") == 0)
        #expect(try count("recovery_sessions") == 0)
        #expect(try count("recovery_attempts") == 0)
    }

    @Test func theCodeMailSpeaksThePageLanguage() throws {
        let app = try TestApplication()
        let (email, _) = try Recovery.verifiedAccount(app)
        #expect(
            try TestAgent(app).post("/api/recovery/start", ["email": email, "ui_locales": "ja"]).status == 202
        )
        let mail = try #require(try Recovery.mails(app, to: email).last)
        #expect(mail.subject == "localhost のアカウント復旧コード")
        #expect(mail.text.contains("/recover?email="))
        #expect(mail.html.contains("<p>コード: \(try #require(Recovery.code(in: mail)))</p>"))
    }
}
