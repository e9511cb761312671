import Crypto
import Foundation
import Postgres
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// A password change, a recovery and "sign out everywhere else" end what a thief may hold: the
/// other browser sessions, every refresh-token family and every access token of the account.
@Suite("Credential changes end other sessions and revoke tokens")
struct CredentialChangeRevocationTests {
    /// `signedInFlow`'s password.
    static let password = "correct horse battery"

    /// What an attacker kept: another browser session and an app's tokens.
    struct Stolen {
        var browser: TestAgent
        var tokens: TokenSet
    }

    /// The owner's agent (signed in, with tokens of the web app) and what a thief holds.
    static func owner(_ app: TestApplication) throws -> (TestAgent, String, Stolen) {
        let (agent, tokens) = try app.signedInFlow()
        let email = try #require(try agent.send("GET", "/api/account").json["email"] as? String)
        let browser = TestAgent(app)
        #expect(try browser.signIn(email: email, password: Self.password).status == 200)
        let (_, stolenTokens) = try app.signedInFlow(agent: browser)
        #expect(tokens.refreshToken != nil)
        return (agent, email, Stolen(browser: browser, tokens: stolenTokens))
    }

    static func introspect(_ app: TestApplication, _ token: String) throws -> Bool? {
        try TestAgent.Reply(
            response: app.client.post(
                "/introspect", form: [("token", token)], headers: [OAuthFixtures.basic()])
        ).json["active"] as? Bool
    }

    /// The stolen session is signed out and the stolen tokens no longer work.
    static func expectRevoked(
        _ app: TestApplication, _ stolen: Stolen, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(try stolen.browser.send("GET", "/api/account").status == 401, sourceLocation: sourceLocation)
        let refresh = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", stolen.tokens.refreshToken ?? ""),
        ])
        #expect(refresh.status == 400, sourceLocation: sourceLocation)
        #expect(refresh.error == "invalid_grant", sourceLocation: sourceLocation)
        #expect(try app.userinfo(stolen.tokens.accessToken).status == 401, sourceLocation: sourceLocation)
        #expect(try introspect(app, stolen.tokens.accessToken) == false, sourceLocation: sourceLocation)
        #expect(
            try introspect(app, stolen.tokens.refreshToken ?? "") == false, sourceLocation: sourceLocation)
    }

    static func liveFamilies(_ app: TestApplication, _ email: String) throws -> Int {
        let id = try app.accountID(email: email)
        return try app.count(
            "SELECT count(*) FROM refresh_token_families WHERE account_id = \(id) AND revoked_at IS NULL")
    }

    @Test func aPasswordChangeSignsOutOtherSessionsAndRevokesEveryToken() throws {
        let app = try OAuthFixtures.app()
        let (agent, email, stolen) = try Self.owner(app)
        let changed = try agent.post(
            "/api/password", ["current_password": Self.password, "new_password": "a fresh long passphrase"])
        #expect(changed.status == 204)
        try Self.expectRevoked(app, stolen)
        #expect(try Self.liveFamilies(app, email) == 0)
        // The session that made the change stays signed in.
        #expect(try agent.send("GET", "/api/account").status == 200)
        let id = try app.accountID(email: email)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'password.changed' AND account_id = \(id) AND detail->>'sessions_revoked' = '1'"
            ) == 1)
    }

    @Test func removingThePasswordSignsOutOtherSessionsAndRevokesEveryToken() throws {
        let app = try OAuthFixtures.app()
        let (agent, _, stolen) = try Self.owner(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        #expect(
            try TestAgent(app).signInWithPasskey(authenticator, userHandle: try agent.userHandle()).status
                == 200)
        #expect(try agent.send("DELETE", "/api/password").status == 204)
        try Self.expectRevoked(app, stolen)
        #expect(try agent.send("GET", "/api/account").status == 200)
    }

    @Test func aRefusedPasswordChangeRevokesNothing() throws {
        let app = try OAuthFixtures.app()
        let (agent, email, stolen) = try Self.owner(app)
        let wrong = try agent.post(
            "/api/password", ["current_password": "not it", "new_password": "a fresh long passphrase"])
        #expect(wrong.status == 403)
        #expect(try stolen.browser.send("GET", "/api/account").status == 200)
        #expect(try app.userinfo(stolen.tokens.accessToken).status == 200)
        #expect(try Self.liveFamilies(app, email) == 2)
    }

    @Test func aRecoveryEndsEverySessionAndRevokesEveryToken() throws {
        let app = try OAuthFixtures.app()
        let (agent, email, stolen) = try Self.owner(app)
        try app.sql("UPDATE account_emails SET verified_at = now() WHERE normalized_email = \(email)")
        let recovering = TestAgent(app)
        try Recovery.open(app, recovering, email: email)
        let reply = try recovering.post("/api/recovery/password", ["new_password": "a recovered passphrase"])
        #expect(reply.status == 200)
        try Self.expectRevoked(app, stolen)
        #expect(try agent.send("GET", "/api/account").status == 401)
        #expect(try recovering.send("GET", "/api/account").status == 200)
        #expect(try Self.liveFamilies(app, email) == 0)
        let notice = try Recovery.mails(app, to: email, count: 2).last
        #expect(notice?.text.contains("signed out") == true)
    }

    @Test func aRecoveryByPasskeyEndsEverySessionAndRevokesEveryToken() throws {
        let app = try OAuthFixtures.app()
        let (_, email, stolen) = try Self.owner(app)
        try app.sql("UPDATE account_emails SET verified_at = now() WHERE normalized_email = \(email)")
        let recovering = TestAgent(app)
        try Recovery.open(app, recovering, email: email)
        let start = try recovering.post("/api/recovery/passkey/start")
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        let credential = try SoftwareAuthenticator().serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        ).json()
        let finish = try recovering.postEncodable(
            "/api/recovery/passkey/finish",
            RegistrationFinish(
                challengeID: start.json["challenge_id"] as? String ?? "", credential: credential))
        #expect(finish.status == 200)
        try Self.expectRevoked(app, stolen)
        #expect(try recovering.send("GET", "/api/account").status == 200)
    }

    @Test func signingOutEverywhereElseRevokesEveryToken() throws {
        let app = try OAuthFixtures.app()
        let (agent, email, stolen) = try Self.owner(app)
        let ended = try agent.post("/api/recovery/end-other-sessions")
        #expect(ended.status == 200)
        #expect(ended.json["revoked"] as? Int == 1)
        try Self.expectRevoked(app, stolen)
        #expect(try Self.liveFamilies(app, email) == 0)
        #expect(try agent.send("GET", "/api/account").status == 200)
    }

    @Test func thePasswordChangeNoticeSaysOtherSessionsWereSignedOut() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, _) = try PasskeyFlowTests.signedIn(app, email: email)
        #expect(
            try agent.post(
                "/api/password",
                ["current_password": "a long passphrase", "new_password": "another long passphrase"]
            ).status == 204)
        let notice = try #require(SecurityNotificationTests.notices(app, to: email).last)
        #expect(notice.subject.contains("Your password was changed"))
        #expect(notice.text.contains("signed out"))
    }
}
