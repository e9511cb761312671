import Crypto
import Foundation
import Postgres
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// Credential changes need a recent authentication; a session that signed in long ago (a
/// stolen cookie, an unlocked computer) must prove it is the account holder again first.
@Suite("Re-authentication before credential changes")
struct ReauthenticationTests {
    static let password = "a long passphrase"

    /// Moves the agent's session's sign-in `seconds` into the past.
    static func age(_ app: TestApplication, _ agent: TestAgent, seconds: Int = 600) throws {
        let token = try #require(agent.cookies["session"])
        try app.sql(
            """
            UPDATE authentication_sessions SET auth_time = auth_time - make_interval(secs => \(seconds)::float8)
            WHERE token_digest = \(SessionStore.digest(token))
            """)
    }

    static func authTime(_ app: TestApplication, _ agent: TestAgent) throws -> (Date, [String]) {
        let token = try #require(agent.cookies["session"])
        let row = try #require(
            try app.sql(
                "SELECT auth_time, amr FROM authentication_sessions WHERE token_digest = \(SessionStore.digest(token))"
            ).first)
        return (try row.decode("auth_time"), try row.decode("amr"))
    }

    static func passwordHash(_ app: TestApplication, _ accountID: UUID) throws -> String? {
        try app.sql("SELECT password_hash FROM password_credentials WHERE account_id = \(accountID)").first?
            .decode("password_hash")
    }

    static func expectReauthenticationRequired(
        _ reply: TestAgent.Reply, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(reply.status == 401, "\(reply.text)", sourceLocation: sourceLocation)
        #expect(reply.error == "reauthentication_required", sourceLocation: sourceLocation)
    }

    /// A passkey assertion for the session's re-authentication challenge.
    static func reauthenticateWithPasskey(
        _ agent: TestAgent, _ authenticator: SoftwareAuthenticator, userHandle: [UInt8], signCount: UInt32 = 0
    ) throws -> TestAgent.Reply {
        let start = try agent.post("/api/reauthenticate/passkey/start")
        let challengeID = start.json["challenge_id"] as? String ?? ""
        let options = try start.decode(PublicKeyCredentialRequestOptionsJSON.self, at: "options")
        let assertion = try authenticator.serverAssertion(challenge: try Base64URL.decode(options.challenge))
            .userHandle(userHandle).signCount(signCount).json()
        return try agent.postEncodable(
            "/api/reauthenticate/passkey/finish",
            AuthenticationFinish(challengeID: challengeID, credential: assertion))
    }

    @Test func anOldSessionCannotAddAPasskey() throws {
        let app = try TestApplication()
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        let accountID = try app.accountID(
            email: try #require(try agent.send("GET", "/api/account").json["email"] as? String))
        // A challenge fetched while recent does not help once the session is old.
        let start = try agent.post("/api/passkeys/registration/start")
        #expect(start.status == 200)
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        try Self.age(app, agent)

        Self.expectReauthenticationRequired(try agent.post("/api/passkeys/registration/start"))
        let credential = try SoftwareAuthenticator().serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        ).json()
        let finish = try agent.postEncodable(
            "/api/passkeys/registration/finish",
            RegistrationFinish(
                challengeID: start.json["challenge_id"] as? String ?? "", credential: credential))
        Self.expectReauthenticationRequired(finish)
        #expect(
            try app.count("SELECT count(*) FROM passkey_credentials WHERE account_id = \(accountID)") == 0)
    }

    @Test func anOldSessionCannotChangeSetOrRemoveThePassword() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app, email: email)
        let accountID = try app.accountID(email: email)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        #expect(try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle).status == 200)
        let before = try Self.passwordHash(app, accountID)
        try Self.age(app, agent)

        Self.expectReauthenticationRequired(
            try agent.post(
                "/api/password",
                ["current_password": Self.password, "new_password": "the attacker's passphrase"]))
        Self.expectReauthenticationRequired(try agent.send("DELETE", "/api/password"))
        #expect(try Self.passwordHash(app, accountID) == before)

        // Passwordless (removed while recent): setting one needs a recent sign-in too.
        try app.sql("DELETE FROM password_credentials WHERE account_id = \(accountID)")
        Self.expectReauthenticationRequired(
            try agent.post("/api/password", ["new_password": "the attacker's passphrase"]))
        #expect(try Self.passwordHash(app, accountID) == nil)
        #expect(try app.auditEvents("password.changed", account: accountID) == 0)
    }

    @Test func anOldSessionCannotRemoveAPasskey() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, _) = try PasskeyFlowTests.signedIn(app, email: email)
        let id = try #require(try agent.registerPasskey(try SoftwareAuthenticator()).json["id"] as? String)
        try Self.age(app, agent)
        Self.expectReauthenticationRequired(try agent.send("DELETE", "/api/passkeys/\(id)"))
        #expect(
            try app.count("SELECT count(*) FROM passkey_credentials WHERE id = \(UUID(uuidString: id))") == 1)
    }

    @Test func theCurrentPasswordMakesAnOldSessionRecentAndWrongGuessesAreThrottled() throws {
        let app = try TestApplication { $0.signInThrottle.accountMaxFailures = 3 }
        let email = TestAgent.uniqueEmail()
        let (agent, _) = try PasskeyFlowTests.signedIn(app, email: email)
        try Self.age(app, agent)
        let (aged, _) = try Self.authTime(app, agent)

        let wrong = try agent.post("/api/reauthenticate/password", ["password": "not the password"])
        #expect(wrong.status == 403)
        #expect(wrong.error == "wrong_password")
        #expect(try Self.authTime(app, agent).0 == aged)

        // Guesses count against the sign-in throttle of the account.
        for _ in 0..<2 { _ = try agent.post("/api/reauthenticate/password", ["password": "still wrong"]) }
        let throttled = try agent.post("/api/reauthenticate/password", ["password": Self.password])
        #expect(throttled.status == 429)
        #expect(throttled.error == "too_many_attempts")
        #expect(try Self.authTime(app, agent).0 == aged)
        // The form sign-in is throttled alike: same counter.
        #expect(try TestAgent(app).signIn(email: email, password: Self.password).status == 429)

        try app.sql("DELETE FROM sign_in_failures")
        let right = try agent.post("/api/reauthenticate/password", ["password": Self.password])
        #expect(right.status == 204, "\(right.text)")
        #expect(try Self.authTime(app, agent).0.timeIntervalSince(aged) > 500)
        #expect(try agent.registerPasskey(try SoftwareAuthenticator()).status == 201)
    }

    @Test func aPasskeyOfThisAccountMakesAnOldSessionRecent() throws {
        let app = try TestApplication()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        try Self.age(app, agent)
        Self.expectReauthenticationRequired(try agent.post("/api/passkeys/registration/start"))

        let reply = try Self.reauthenticateWithPasskey(agent, authenticator, userHandle: handle)
        #expect(reply.status == 204, "\(reply.text)")
        let (authTime, amr) = try Self.authTime(app, agent)
        #expect(Date().timeIntervalSince(authTime) < 60)
        #expect(amr.contains("pwd"))
        #expect(amr.contains("hwk"))
        #expect(try agent.registerPasskey(try SoftwareAuthenticator()).status == 201)
    }

    @Test func aClonedPasskeyCannotReauthenticateWhenThePolicyIsRefuse() throws {
        let app = try TestApplication { $0.passkeys.onCounterRegression = .refuse }
        let (agent, handle) = try PasskeyFlowTests.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        #expect(
            try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, signCount: 10).status
                == 200)
        try Self.age(app, agent)
        let (before, _) = try Self.authTime(app, agent)

        // The clone's counter is behind the stored 10: the session stays old.
        let reply = try Self.reauthenticateWithPasskey(agent, authenticator, userHandle: handle, signCount: 4)
        #expect(reply.status == 400)
        #expect(reply.error == "passkey_verification_failed")
        #expect(try Self.authTime(app, agent).0 == before)
        Self.expectReauthenticationRequired(try agent.post("/api/passkeys/registration/start"))
        #expect(
            try Self.reauthenticateWithPasskey(agent, authenticator, userHandle: handle, signCount: 11).status
                == 204)
    }

    @Test func aPasskeyOfAnotherAccountCannotReauthenticate() throws {
        let app = try TestApplication()
        let (victim, _) = try PasskeyFlowTests.signedIn(app)
        let (attacker, attackerHandle) = try PasskeyFlowTests.signedIn(app)
        let attackerPasskey = try SoftwareAuthenticator()
        #expect(try attacker.registerPasskey(attackerPasskey).status == 201)
        // The attacker holds the victim's old session cookie and their own passkey.
        try Self.age(app, victim)
        let (aged, _) = try Self.authTime(app, victim)

        let reply = try Self.reauthenticateWithPasskey(victim, attackerPasskey, userHandle: attackerHandle)
        #expect(reply.status == 403, "\(reply.text)")
        #expect(reply.error == "wrong_account")
        #expect(try Self.authTime(app, victim).0 == aged)
        Self.expectReauthenticationRequired(try victim.post("/api/passkeys/registration/start"))
    }

    @Test func aReauthenticationChallengeBelongsToItsSession() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app, email: email)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        let other = TestAgent(app)
        #expect(try other.signIn(email: email, password: Self.password).status == 200)
        try Self.age(app, agent)
        // A challenge issued to another session of the same account is refused.
        let start = try other.post("/api/reauthenticate/passkey/start")
        let options = try start.decode(PublicKeyCredentialRequestOptionsJSON.self, at: "options")
        let assertion = try authenticator.serverAssertion(challenge: try Base64URL.decode(options.challenge))
            .userHandle(handle).json()
        let reply = try agent.postEncodable(
            "/api/reauthenticate/passkey/finish",
            AuthenticationFinish(
                challengeID: start.json["challenge_id"] as? String ?? "", credential: assertion))
        #expect(reply.status == 400)
        #expect(reply.error == "challenge_invalid")
        Self.expectReauthenticationRequired(try agent.post("/api/passkeys/registration/start"))
    }

    @Test func aSessionOpenedByARecoveryIsNotRecentForAnotherCredentialChange() throws {
        let app = try TestApplication()
        let (email, accountID) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)
        #expect(
            try agent.post("/api/recovery/password", ["new_password": "a recovered passphrase"]).status == 200
        )
        // Whoever holds the mailbox got one step (this password), not a free hand afterwards.
        Self.expectReauthenticationRequired(try agent.post("/api/passkeys/registration/start"))
        Self.expectReauthenticationRequired(
            try agent.post(
                "/api/password",
                ["current_password": "a recovered passphrase", "new_password": "yet another one"]))
        #expect(
            try app.count("SELECT count(*) FROM passkey_credentials WHERE account_id = \(accountID)") == 0)
        // Proving the password again makes it an ordinary recent session.
        #expect(
            try agent.post("/api/reauthenticate/password", ["password": "a recovered passphrase"]).status
                == 204)
        #expect(try agent.registerPasskey(try SoftwareAuthenticator()).status == 201)
    }

    @Test func theConditionalUpgradeChallengeIsItselfTheRecentSignIn() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        _ = try PasskeyFlowTests.signedIn(app, email: email)
        let agent = TestAgent(app)
        let signIn = try agent.signIn(email: email, password: Self.password)
        let challengeID = try #require(
            (signIn.json["passkey_upgrade"] as? [String: Any])?["challenge_id"] as? String)
        let creation = try signIn.decode(PasskeyFlowTests.Upgrade.self, at: "passkey_upgrade").options
        // Only a password sign-in issues this challenge, and it lives minutes: the upgrade
        // finishes even when the session's own clock says it is no longer recent.
        try Self.age(app, agent)
        let credential = try SoftwareAuthenticator().serverRegistration(
            challenge: try Base64URL.decode(creation.challenge)
        ).flags(up: false, uv: false).json()
        let finish = try agent.postEncodable(
            "/api/passkeys/registration/finish",
            RegistrationFinish(challengeID: challengeID, credential: credential))
        #expect(finish.status == 201, "\(finish.text)")
        // A modal registration in the same session is refused.
        Self.expectReauthenticationRequired(try agent.post("/api/passkeys/registration/start"))
    }

    @Test func oldReauthenticationChallengesArePurged() throws {
        let app = try TestApplication()
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        #expect(try agent.post("/api/reauthenticate/passkey/start").status == 200)
        #expect(try agent.post("/api/reauthenticate/passkey/start").status == 200)
        try app.sql(
            "UPDATE reauthentication_challenges SET expires_at = now() - interval '2 hours' WHERE id = (SELECT id FROM reauthentication_challenges LIMIT 1)"
        )
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        #expect(try app.count("SELECT count(*) FROM reauthentication_challenges") == 1)
    }

    @Test func reauthenticationNeedsASession() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        #expect(try agent.post("/api/reauthenticate/password", ["password": "x"]).error == "not_signed_in")
        #expect(try agent.post("/api/reauthenticate/passkey/start").error == "not_signed_in")
    }

    @Test func theWindowIsConfigurable() throws {
        let app = try TestApplication { $0.sessions.reauthenticationSeconds = 60 }
        let (agent, _) = try PasskeyFlowTests.signedIn(app)
        try Self.age(app, agent, seconds: 90)
        Self.expectReauthenticationRequired(try agent.post("/api/passkeys/registration/start"))
    }
}
