import Foundation
import OIDC
import Testing

@testable import AuthServer

/// What ends with a browser session: the session itself when the browser signs in again, and
/// the refresh and access tokens issued under it unless the user granted `offline_access`.
@Suite("OAuth: tokens and sessions that end with the browser session")
struct SessionEndTests {
    static func refresh(_ app: TestApplication, _ token: String) throws -> TestAgent.Reply {
        try app.token([("grant_type", "refresh_token"), ("refresh_token", token)])
    }

    static func introspect(_ app: TestApplication, _ token: String) throws -> [String: Any] {
        try TestAgent.Reply(
            response: app.client.post("/introspect", form: [("token", token)], headers: [OAuthFixtures.basic()])
        ).json
    }

    /// An app whose web client gets refresh tokens without `offline_access` too.
    static func optedInApp(backchannelURI: String? = nil) throws -> TestApplication {
        try OAuthFixtures.app(backchannelURI: backchannelURI) {
            $0.clients[0].refreshTokensWithoutOfflineAccess = true
        }
    }

    /// One browser session's two grants to the opted-in client: one bound to the session
    /// (`openid profile`), one granted `offline_access`.
    static func boundAndOfflineGrants(_ app: TestApplication) throws -> (
        agent: TestAgent, bound: TokenSet, offline: TokenSet
    ) {
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let (_, bound) = try app.signedInFlow(AuthorizationAttempt(scope: "openid profile"), agent: agent)
        let (_, offline) = try app.signedInFlow(
            AuthorizationAttempt(scope: "openid offline_access"), agent: agent)
        return (agent, bound, offline)
    }

    // MARK: - Logout revokes the session's tokens

    @Test func rpInitiatedLogoutRevokesTheSessionsTokensButNotOfflineAccessOnes() throws {
        let app = try Self.optedInApp()
        let (agent, bound, offline) = try Self.boundAndOfflineGrants(app)
        let boundRefresh = try #require(bound.refreshToken)
        let offlineRefresh = try #require(offline.refreshToken)

        let hint = try #require(bound.idToken)
        let logout = try agent.send(
            "GET", "/logout?" + FormEncoding.encode([(name: "id_token_hint", value: hint)]))
        #expect(logout.status == 200 && logout.text.contains("signed-out"))
        #expect(try agent.send("GET", "/api/account").status == 401)

        // The attacker who copied the session-bound tokens gets nothing after the logout.
        let refused = try Self.refresh(app, boundRefresh)
        #expect(refused.status == 400 && refused.error == "invalid_grant")
        #expect(try app.userinfo(bound.accessToken).status == 401)
        #expect(
            try app.sql(
                "SELECT count(*) AS n FROM refresh_token_families WHERE revoked_reason = 'session_ended'"
            )
            .first?.decode("n", as: Int.self) == 1)
        // What the user granted offline_access for lives on.
        #expect(try app.userinfo(offline.accessToken).status == 200)
        #expect(try Self.refresh(app, offlineRefresh).status == 200)
    }

    /// A session also ends by running out: its absolute lifetime, or its idle timeout. A
    /// session-bound refresh token must end with it there too, not live on to its family's own
    /// end (90 days) with the user signed in nowhere. Each refresh is the session's use: it
    /// moves the idle deadline, as a request of the browser does.
    @Test func sessionBoundRefreshTokensEndWhenTheSessionRunsOut() throws {
        let app = try Self.optedInApp()
        let (_, bound, offline) = try Self.boundAndOfflineGrants(app)
        var boundRefresh = try #require(bound.refreshToken)
        var offlineRefresh = try #require(offline.refreshToken)
        func idle(days: Int) throws {
            try app.sql(
                "UPDATE authentication_sessions SET last_seen_at = now() - make_interval(days => \(days)::int)")
        }
        func rotate(_ token: inout String) throws -> TestAgent.Reply {
            let reply = try Self.refresh(app, token)
            if let next = reply.json["refresh_token"] as? String { token = next }
            return reply
        }

        // A refresh moves the idle deadline that the browser left behind.
        try idle(days: 6)
        #expect(try rotate(&boundRefresh).status == 200)
        #expect(
            try app.sql(
                "SELECT bool_and(idle_expires_at > now() + interval '6 days') AS moved FROM authentication_sessions"
            ).first?.decode("moved", as: Bool.self) == true)

        // Idle past the timeout: the session-bound token is refused, the offline one lives on;
        // introspection (RFC 7662 §2.2: "currently active") says the same as /token.
        try idle(days: 8)
        #expect(try Self.introspect(app, boundRefresh)["active"] as? Bool == false)
        #expect(try Self.introspect(app, offlineRefresh)["active"] as? Bool == true)
        let idle = try rotate(&boundRefresh)
        #expect(idle.status == 400 && idle.error == "invalid_grant")
        #expect(try rotate(&offlineRefresh).status == 200)

        // Past the absolute lifetime, however recently used: the same.
        let (_, again) = try app.signedInFlow(AuthorizationAttempt(scope: "openid profile"))
        var againRefresh = try #require(again.refreshToken)
        try app.sql("UPDATE authentication_sessions SET expires_at = now() - interval '1 second'")
        #expect(try Self.introspect(app, againRefresh)["active"] as? Bool == false)
        let expired = try rotate(&againRefresh)
        #expect(expired.status == 400 && expired.error == "invalid_grant")
        #expect(try rotate(&offlineRefresh).status == 200)
    }

    @Test func signingOutAndRevokingASessionOnTheAccountPageRevokeItsTokens() throws {
        let app = try Self.optedInApp()
        // The sign-out button.
        let (agent, tokens) = try app.signedInFlow(AuthorizationAttempt(scope: "openid"))
        let refreshToken = try #require(tokens.refreshToken)
        #expect(try agent.postForm("/signout", []).status == 303)
        #expect(try Self.refresh(app, refreshToken).error == "invalid_grant")
        #expect(try app.userinfo(tokens.accessToken).status == 401)

        // Revoking another browser's session from the account page.
        let email = TestAgent.uniqueEmail()
        let phone = TestAgent(app)
        try phone.signUp(email: email)
        let (_, phoneTokens) = try app.signedInFlow(AuthorizationAttempt(scope: "openid"), agent: phone)
        let laptop = TestAgent(app)
        try #require(try laptop.signIn(email: email, password: "correct horse battery").status == 200)
        let phoneIDToken = try #require(phoneTokens.idToken)
        let phoneRefresh = try #require(phoneTokens.refreshToken)
        let phoneSession = try #require(try app.claims(of: phoneIDToken)["sid"]?.stringValue)
        #expect(try laptop.send("DELETE", "/api/sessions/\(phoneSession)").status == 204)
        #expect(try Self.refresh(app, phoneRefresh).error == "invalid_grant")
        #expect(try app.userinfo(phoneTokens.accessToken).status == 401)
    }

    /// A code still unredeemed when its session ends would otherwise start a family that the
    /// logout never saw.
    @Test func aCodeIssuedBeforeTheSessionEndedIsRefusedAfterIt() throws {
        let app = try Self.optedInApp()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt(scope: "openid profile")
        let code = try #require(try agent.authorize(attempt)["code"])
        #expect(try agent.postForm("/signout", []).status == 303)
        let reply = try app.redeem(code, attempt)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
        #expect(reply.json["access_token"] == nil && reply.json["refresh_token"] == nil)
        #expect(
            try app.sql("SELECT count(*) AS n FROM refresh_token_families").first?.decode("n", as: Int.self)
                == 0)
    }

    // MARK: - Who gets refresh tokens

    @Test func confidentialClientsGetRefreshTokensOnlyWithOfflineAccessUnlessTheyOptIn() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let (_, plain) = try app.signedInFlow(AuthorizationAttempt(scope: "openid profile"), agent: agent)
        #expect(plain.refreshToken == nil)
        #expect(plain.idToken != nil)
        let (_, offline) = try app.signedInFlow(
            AuthorizationAttempt(scope: "openid offline_access"), agent: agent)
        #expect(offline.refreshToken != nil)

        let optedIn = try Self.optedInApp()
        let (_, bound) = try optedIn.signedInFlow(AuthorizationAttempt(scope: "openid profile"))
        #expect(bound.refreshToken != nil)
    }

    @Test func onlyConfidentialWebClientsMayOptInToRefreshTokensWithoutOfflineAccess() throws {
        func check(_ client: String) -> ConfigurationLoader.Result {
            ConfigurationLoader.check(
                data: Data(#"{"issuer": "https://id.example.com", "clients": [\#(client)]}"#.utf8))
        }
        let native = check(
            #"{"client_id": "app", "application_type": "native", "redirect_uris": ["com.example.app:/cb"], "grant_types": ["authorization_code", "refresh_token"], "refresh_tokens_without_offline_access": true}"#
        )
        #expect(native.configuration == nil)
        #expect(
            native.problems.map(\.description).contains(
                "error: $.clients[0].refresh_tokens_without_offline_access: public clients get refresh tokens only with offline_access"
            ))
        let web = check(
            #"{"client_id": "web", "redirect_uris": ["https://rp.example/cb"], "client_secret_hash": "\#(ClientSecret.hash(OAuthFixtures.webSecret))", "grant_types": ["authorization_code", "refresh_token"], "refresh_tokens_without_offline_access": true}"#
        )
        #expect(web.configuration?.clients.first?.refreshTokensWithoutOfflineAccess == true)
    }

    // MARK: - Signing in again ends the previous session (of the same account)

    /// Signing in as another account adds it to the browser (the account chooser): the previous
    /// account's session stays live, held in the accounts cookie, not ended.
    @Test func signingInAsAnotherAccountWithPromptLoginKeepsThePreviousAccountSignedIn() throws {
        let app = try OAuthFixtures.app()
        let other = TestAgent.uniqueEmail("other")
        try TestAgent(app).signUp(email: other, password: "a long passphrase")
        let (agent, first) = try app.signedInFlow()
        let oldCookie = try #require(agent.cookies["session"])
        let firstIDToken = try #require(first.idToken)
        let firstSID = try #require(try app.claims(of: firstIDToken)["sid"]?.stringValue)
        let firstSession = try #require(UUID(uuidString: firstSID))

        let attempt = AuthorizationAttempt(extra: [("prompt", "login")])
        let signin = try #require(try agent.send("GET", "/authorize?" + attempt.query).header("Location"))
        let returnTo = try #require(TestAgent.queryItems("http://x" + signin)["return_to"])
        let signedIn = try agent.postForm(
            "/signin", [("email", other), ("password", "a long passphrase"), ("return_to", returnTo)])
        #expect(signedIn.status == 303)
        #expect(agent.cookies["session"] != oldCookie)
        #expect(agent.cookies["accounts"] == oldCookie)

        let ended = try app.sql(
            "SELECT revoked_at IS NOT NULL AS ended FROM authentication_sessions WHERE id = \(firstSession)")
        #expect(try ended.first?.decode("ended", as: Bool.self) == false)
        // The new session works.
        #expect(try agent.send("GET", "/api/account").status == 200)
    }

    @Test func signingInAgainThroughTheJSONAPIEndsThePreviousSession() throws {
        let app = try OAuthFixtures.app()
        let email = TestAgent.uniqueEmail()
        let agent = TestAgent(app)
        try agent.signUp(email: email)
        let oldCookie = try #require(agent.cookies["session"])
        #expect(try agent.signIn(email: email, password: "correct horse battery").status == 200)
        let stale = TestAgent(app)
        stale.cookies["session"] = oldCookie
        #expect(try stale.send("GET", "/api/account").status == 401)
        #expect(try agent.send("GET", "/api/account").status == 200)
        #expect(
            try app.sql("SELECT count(*) AS n FROM authentication_sessions WHERE revoked_at IS NULL").first?
                .decode(
                    "n", as: Int.self) == 1)
    }
}
