import Crypto
import Foundation
import Postgres
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

@Suite("Account page API: passkeys, password, profile, sessions")
struct AccountManagementTests {
    @Test func renameAndDeleteAPasskeyWithSignalData() throws {
        let app = try TestApplication()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app)
        let first = try SoftwareAuthenticator()
        let second = try SoftwareAuthenticator()
        let id = try #require(try agent.registerPasskey(first).json["id"] as? String)
        #expect(try agent.registerPasskey(second).status == 201)

        let rename = try agent.send("PATCH", "/api/passkeys/\(id)", json: ["name": "Work laptop <b>"])
        #expect(rename.status == 204)
        let names = (try agent.send("GET", "/api/passkeys").json["passkeys"] as? [[String: Any]])?.compactMap
        { $0["name"] as? String }
        #expect(names?.contains("Work laptop <b>") == true)
        #expect(try agent.send("PATCH", "/api/passkeys/\(id)", json: ["name": "  "]).error == "invalid_name")
        // The limit counts code points, as the column's CHECK does: 100 characters of seven code
        // points each are refused with a clear error, not a failed INSERT (500).
        let family = String(repeating: "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}", count: 100)
        #expect(family.count == 100)
        let long = try agent.send("PATCH", "/api/passkeys/\(id)", json: ["name": family])
        #expect(long.status == 400 && long.error == "invalid_name")
        #expect(
            try agent.send("PATCH", "/api/passkeys/\(id)", json: ["name": String(repeating: "\u{00E9}", count: 100)]).status
                == 204)

        let deleted = try agent.send("DELETE", "/api/passkeys/\(id)")
        #expect(deleted.status == 200)
        let signal = try #require(deleted.json["signal"] as? [String: Any])
        #expect(signal["rpId"] as? String == "localhost")
        #expect(signal["userId"] as? String == Base64URL.encode(handle))
        #expect(signal["allAcceptedCredentialIds"] as? [String] == [Base64URL.encode(second.credentialID)])
        // The deleted passkey no longer signs in.
        #expect(try TestAgent(app).signInWithPasskey(first, userHandle: handle).error == "unknown_credential")
    }

    @Test func theLastPasskeyOfAPasswordlessAccountCannotBeDeleted() throws {
        let app = try TestApplication()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        let id = try #require(try agent.registerPasskey(authenticator).json["id"] as? String)
        #expect(try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle).status == 200)
        #expect(try agent.send("DELETE", "/api/password").status == 204)
        let refused = try agent.send("DELETE", "/api/passkeys/\(id)")
        #expect(refused.status == 409)
        #expect(refused.error == "last_credential")
        #expect(
            try agent.send("POST", "/api/password", json: ["new_password": "a new passphrase"]).status == 204)
        #expect(try agent.send("DELETE", "/api/passkeys/\(id)").status == 200)
    }

    @Test func anotherAccountCannotTouchMyPasskeysOrSessions() throws {
        let app = try TestApplication()
        let (owner, _) = try PasskeyFlowTests.signedIn(app)
        let id = try #require(try owner.registerPasskey(try SoftwareAuthenticator()).json["id"] as? String)
        let ownerSessions = try owner.send("GET", "/api/sessions").json["sessions"] as? [[String: Any]]
        let ownerSession = try #require(ownerSessions?.first?["id"] as? String)
        let (other, _) = try PasskeyFlowTests.signedIn(app)
        #expect(try other.send("DELETE", "/api/passkeys/\(id)").status == 404)
        #expect(try other.send("PATCH", "/api/passkeys/\(id)", json: ["name": "mine"]).status == 404)
        #expect(try other.send("DELETE", "/api/sessions/\(ownerSession)").status == 404)
        #expect(try owner.send("GET", "/api/account").status == 200)
    }

    @Test func stateChangingAccountCallsNeedTheCSRFToken() throws {
        let app = try TestApplication()
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        let reply = try agent.send("PATCH", "/api/account", json: ["display_name": "Mallory"], csrf: false)
        #expect(reply.status == 403)
        #expect(reply.error == "csrf_failed")
        #expect(try agent.send("DELETE", "/api/password", csrf: false).status == 403)
    }

    @Test func displayNameChangeReturnsCurrentUserDetails() throws {
        let app = try TestApplication()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app)
        let reply = try agent.send("PATCH", "/api/account", json: ["display_name": "Ada Lovelace"])
        #expect(reply.status == 200)
        let signal = try #require(reply.json["signal"] as? [String: Any])
        #expect(signal["displayName"] as? String == "Ada Lovelace")
        #expect(signal["userId"] as? String == Base64URL.encode(handle))
    }

    /// Two tabs of one account at the same moment: one deletes the only passkey, the other
    /// removes the password. Each check alone passes (a used passkey exists; a password
    /// exists), so unless the two serialise, the account ends with no way to sign in.
    @Test func passwordRemovalWaitsForAPasskeyDeletionUnderWayAndThenRefuses() throws {
        final class Pending: @unchecked Sendable {
            let agent: TestAgent
            var reply: TestAgent.Reply?
            let done = DispatchSemaphore(value: 0)
            init(_ agent: TestAgent) { self.agent = agent }
        }
        let app = try TestApplication()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        #expect(try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle).status == 200)
        let pending = Pending(agent)
        // The passkey deletion: it holds the account's lock, as /api/passkeys/:id does, while
        // the password removal arrives.
        try app.database.pool.withTransaction { connection in
            try connection.query("SELECT id FROM accounts FOR UPDATE")
            try connection.query("DELETE FROM passkey_credentials")
            Thread {
                pending.reply = try? pending.agent.send("DELETE", "/api/password")
                pending.done.signal()
            }.start()
            Thread.sleep(forTimeInterval: 0.5)
        }
        pending.done.wait()
        #expect(pending.reply?.status == 409)
        #expect(pending.reply?.error == "passkey_required")
        #expect(
            try app.sql("SELECT count(*) AS n FROM password_credentials").first?.decode("n", as: Int.self)
                == 1)
    }

    /// A passkey sign-in records the passkey's use, then inserts its session, whose foreign key
    /// share-locks the account's key, in one transaction. A deletion of that passkey under way
    /// takes the account's lock, then waits for the passkey's row. The account's lock must not
    /// stop the sign-in's foreign key check: the two would wait for each other until PostgreSQL
    /// broke the deadlock by failing one of them.
    @Test func aPasskeySignInUnderWayAndTheDeletionOfItsPasskeyDoNotDeadlock() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (signedIn, _) = try PasskeyFlowTests.signedIn(app, email: email)
        let id = try #require(try signedIn.registerPasskey(try SoftwareAuthenticator()).json["id"] as? String)
        let account = try app.accountID(email: email)

        // The sign-in's statements, in the order it runs them.
        let signIn = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { signIn.close() }
        try signIn.query("BEGIN")
        try signIn.query("UPDATE passkey_credentials SET last_used_at = now() WHERE id = \(try #require(UUID(uuidString: id)))")
        // The agent is used by the deletion's thread alone once it starts.
        nonisolated(unsafe) let owner = signedIn
        let deletion = InBackground { try owner.send("DELETE", "/api/passkeys/\(id)") }
        #expect(
            try app.lockWaiters(like: "%passkey_credentials%"),
            "the deletion did not wait")
        try signIn.query("SELECT 1 FROM accounts WHERE id = \(account) FOR KEY SHARE")
        try signIn.query("COMMIT")
        let reply = try deletion.reply()
        #expect(reply.status == 200, "\(reply.status): \(reply.text)")
    }

    @Test func passwordCanBeRemovedOnlyAfterAPasskeySignIn() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app, email: email)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        let early = try agent.send("DELETE", "/api/password")
        #expect(early.status == 409)
        #expect(early.error == "passkey_required")
        #expect(try agent.send("GET", "/api/account").json["can_remove_password"] as? Bool == false)

        #expect(try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle).status == 200)
        #expect(try agent.send("GET", "/api/account").json["can_remove_password"] as? Bool == true)
        #expect(try agent.send("DELETE", "/api/password").status == 204)
        // Passwordless now: the old password answers like any wrong one.
        #expect(
            try TestAgent(app).signIn(email: email, password: "a long passphrase").error
                == "invalid_credentials")
    }

    @Test func changePasswordNeedsTheCurrentOne() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, _) = try PasskeyFlowTests.signedIn(app, email: email)
        let wrong = try agent.send(
            "POST", "/api/password", json: ["current_password": "nope", "new_password": "another passphrase"])
        #expect(wrong.status == 403)
        #expect(wrong.error == "wrong_password")
        #expect(
            try agent.send(
                "POST", "/api/password", json: ["current_password": "a long passphrase", "new_password": "x"]
            ).error == "weak_password")
        #expect(
            try agent.send(
                "POST", "/api/password",
                json: ["current_password": "a long passphrase", "new_password": "another passphrase"]
            ).status == 204)
        #expect(try TestAgent(app).signIn(email: email, password: "another passphrase").status == 200)
    }

    @Test func revokedSessionsNoLongerSignIn() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (phone, _) = try PasskeyFlowTests.signedIn(app, email: email)
        let laptop = TestAgent(app)
        #expect(try laptop.signIn(email: email, password: "a long passphrase").status == 200)
        let sessions = try #require(
            try phone.send("GET", "/api/sessions").json["sessions"] as? [[String: Any]])
        #expect(sessions.count == 2)
        let other = try #require(sessions.first { $0["current"] as? Bool == false }?["id"] as? String)
        #expect(try phone.send("DELETE", "/api/sessions/\(other)").status == 204)
        #expect(try laptop.send("GET", "/api/account").status == 401)
        #expect(try laptop.send("GET", "/account").header("Location") == "/signin?return_to=%2Faccount")
        #expect(try phone.send("GET", "/api/account").status == 200)
    }

    @Test func signOutEndsTheSessionAndClearsTheCookie() throws {
        let app = try TestApplication()
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        let token = try #require(agent.cookies["session"])
        let reply = try agent.post("/api/signout")
        #expect(reply.status == 204)
        #expect(reply.setCookies.contains { $0.hasPrefix("session=;") && $0.contains("Max-Age=0") })
        agent.cookies["session"] = token
        #expect(try agent.send("GET", "/api/account").status == 401)
    }

    @Test func formSignOutWorksWithoutJavaScript() throws {
        let app = try TestApplication()
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        let reply = try agent.postForm("/signout", [])
        #expect(reply.status == 303)
        #expect(reply.header("Location") == "/signin")
        #expect(try agent.send("GET", "/api/account").status == 401)
    }

    @Test func idleSessionsExpire() throws {
        let app = try TestApplication()
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        try app.sql(
            "UPDATE authentication_sessions SET last_seen_at = now() - make_interval(secs => idle_timeout_seconds + 1)"
        )
        #expect(try agent.send("GET", "/api/account").status == 401)
    }

    @Test func sessionLookupsMoveTheIdleDeadlineAtMostOnceAMinute() throws {
        let app = try TestApplication()
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        let token = try #require(agent.cookies["session"])
        let store = SessionStore(
            pool: app.database.pool, settings: app.configuration.sessions,
            cookies: SessionCookies(configuration: app.configuration))
        func lastSeenAndVersion() throws -> (Date, String) {
            let row = try #require(
                try app.sql(
                    "SELECT last_seen_at, xmin::text AS version FROM authentication_sessions WHERE revoked_at IS NULL"
                )
                .first)
            return (try row.decode("last_seen_at"), try row.decode("version"))
        }
        // Seen 30 s ago: a lookup leaves the row as it is (no new row version).
        try app.sql("UPDATE authentication_sessions SET last_seen_at = now() - interval '30 seconds'")
        let (recent, recentVersion) = try lastSeenAndVersion()
        #expect(try store.session(token: token) != nil)
        let (unchanged, unchangedVersion) = try lastSeenAndVersion()
        #expect(unchanged == recent)
        #expect(unchangedVersion == recentVersion)
        // Seen 2 minutes ago: a lookup moves it to now.
        try app.sql("UPDATE authentication_sessions SET last_seen_at = now() - interval '2 minutes'")
        let (old, _) = try lastSeenAndVersion()
        #expect(try store.session(token: token) != nil)
        let (moved, _) = try lastSeenAndVersion()
        #expect(moved.timeIntervalSince(old) > 100)
    }

    @Test func signedInUsersSkipTheSignInPageUnlessPromptIsLogin() throws {
        let app = try TestApplication()
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        let skip = try agent.send("GET", "/signin?return_to=%2Fauthorize%3Fclient_id%3Dx")
        #expect(skip.status == 303)
        #expect(skip.header("Location") == "/authorize?client_id=x")
        #expect(try agent.send("GET", "/signin?prompt=login").status == 200)
    }

    @Test func currentSessionReportsAuthTimeAndAMR() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, _) = try PasskeyFlowTests.signedIn(app, email: email)
        let store = SessionStore(
            pool: app.database.pool, settings: app.configuration.sessions,
            cookies: SessionCookies(configuration: app.configuration))
        let token = try #require(agent.cookies["session"])
        let session = try #require(try store.session(token: token))
        #expect(session.amr == ["pwd"])
        #expect(session.isFresh(maxAge: 300, now: Date()))
        #expect(!session.isFresh(maxAge: 300, now: session.authTime.addingTimeInterval(301)))
        #expect(try store.session(token: "not-a-token") == nil)
    }
}

@Suite("Expired rows")
struct ExpiredRowsTests {
    @Test func purgeRemovesOnlyRowsWellPastTheirEnd() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        _ = try agent.post("/api/passkeys/authentication/start")
        _ = try agent.post("/api/passkeys/authentication/start")
        try app.sql(
            "UPDATE passkey_authentication_challenges SET expires_at = now() - interval '2 hours' WHERE id = (SELECT id FROM passkey_authentication_challenges LIMIT 1)"
        )
        _ = try agent.post("/api/passkeys/signup/start", [String: Any]())
        try app.sql("UPDATE passkey_account_registrations SET expires_at = now() - interval '2 hours'")
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        #expect(
            try app.sql("SELECT count(*) AS n FROM passkey_authentication_challenges").first?.decode(
                "n", as: Int.self) == 1)
        #expect(
            try app.sql("SELECT count(*) AS n FROM passkey_account_registrations").first?.decode(
                "n", as: Int.self) == 0)
    }
}
