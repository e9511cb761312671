import Foundation
import Testing

@testable import AuthServer

/// Two decisions that every request with a session or a state change depends on: a session
/// ends at its absolute lifetime however recently it was used, and a request that the
/// browser marks as coming from another site is refused although it carries the CSRF token
/// (a sibling subdomain can plant the CSRF cookie and post with `Origin: null`).
@Suite struct SessionBoundaryTests {
    // MARK: - Absolute session lifetime

    /// Moves the agent's session past its absolute end while it has just been used.
    static func expireAbsolutely(_ app: TestApplication, _ agent: TestAgent) throws {
        let token = try #require(agent.cookies["session"])
        let updated = try app.sql(
            """
            UPDATE authentication_sessions SET expires_at = now() - interval '1 second', last_seen_at = now()
            WHERE token_digest = \(SessionStore.digest(token))
            """)
        #expect(updated.affectedRows == 1)
    }

    @Test func aSessionPastItsAbsoluteLifetimeIsRefusedEverywhereThoughRecentlyActive() throws {
        let app = try OAuthFixtures.app()
        let email = TestAgent.uniqueEmail()
        let stale = TestAgent(app)
        #expect(try stale.signUp(email: email, password: "a long passphrase").status == 201)
        let other = TestAgent(app)
        #expect(try other.signIn(email: email, password: "a long passphrase").status == 200)
        #expect((try other.send("GET", "/api/sessions").json["sessions"] as? [Any])?.count == 2)
        try Self.expireAbsolutely(app, stale)

        // The JSON API.
        let api = try stale.send("GET", "/api/account")
        #expect(api.status == 401)
        #expect(api.error == "not_signed_in")
        try stale.prepareCSRF()
        let change = try stale.send("PATCH", "/api/account", json: ["display_name": "Mallory"])
        #expect(change.status == 401)

        // The pages.
        let page = try stale.send("GET", "/account")
        #expect(page.status == 303)
        #expect(page.header("Location")?.hasPrefix("/signin") == true)

        // /authorize: no code from the ended session.
        var attempt = AuthorizationAttempt()
        attempt.extra = [("prompt", "none")]
        let authorize = try stale.send("GET", "/authorize?" + attempt.query)
        #expect(authorize.status == 303)
        let callback = TestAgent.queryItems(authorize.header("Location") ?? "")
        #expect(callback["error"] == "login_required")
        #expect(callback["code"] == nil)

        // The session lists: the account page's and the operator's.
        #expect((try other.send("GET", "/api/sessions").json["sessions"] as? [Any])?.count == 1)
        let accountID = try app.accountID(email: email)
        #expect(
            try AdminFlow(store: PostgresAdminStore(db: app.database.pool)).sessions(accountID: accountID)
                .count == 1)
        #expect(
            try AdminFlow(store: PostgresAdminStore(db: app.database.pool)).details(accountID: accountID)?
                .activeSessions
                == 1)
        #expect(try other.send("GET", "/api/account").status == 200)
    }

    // MARK: - Sec-Fetch-Site with a valid CSRF token

    /// A request as a sibling site's page would send it: the planted CSRF cookie and the
    /// matching token, `Origin: null`, and the browser's `Sec-Fetch-Site` marking.
    static func crossSite(
        _ agent: TestAgent, _ path: String, site: String, form: [(String, String)]? = nil,
        json: [String: Any]? = nil
    ) throws -> TestAgent.Reply {
        let token = try agent.prepareCSRF()
        var headers: [(String, String)] = [
            ("Origin", "null"), ("Sec-Fetch-Site", site), ("X-CSRF-Token", token),
            ("Cookie", agent.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")),
        ]
        var body: [UInt8] = []
        if let form {
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            body = Array(
                (form + [("csrf_token", token)]).map {
                    "\(TestHTTPClient.encode($0.0))=\(TestHTTPClient.encode($0.1))"
                }
                .joined(separator: "&").utf8)
        } else if let json {
            headers.append(("Content-Type", "application/json"))
            body = Array(try JSONSerialization.data(withJSONObject: json))
        }
        return TestAgent.Reply(
            response: try agent.client.send(method: "POST", target: path, headers: headers, body: body))
    }

    @Test(arguments: ["cross-site", "same-site"])
    func aJSONCallFromAnotherSiteIsRefusedDespiteAValidToken(site: String) throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let reply = try Self.crossSite(
            agent, "/api/signup/password", site: site,
            json: ["email": TestAgent.uniqueEmail(), "display_name": "A", "password": "a long passphrase"])
        #expect(reply.status == 403)
        #expect(reply.error == "csrf_failed")
        #expect(reply.setCookies.allSatisfy { !$0.hasPrefix("session=") })
        #expect(try app.sql("SELECT count(*) AS n FROM accounts").first?.decode("n", as: Int.self) == 0)
        // The same call marked same-origin goes through: the token itself was valid.
        let same = try agent.post(
            "/api/signup/password",
            ["email": TestAgent.uniqueEmail(), "display_name": "A", "password": "a long passphrase"])
        #expect(same.status == 201)
    }

    @Test(arguments: ["cross-site", "same-site"])
    func aSignInFormFromAnotherSiteIsRefusedDespiteAValidToken(site: String) throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        #expect(try TestAgent(app).signUp(email: email, password: "a long passphrase").status == 201)
        let agent = TestAgent(app)
        _ = try agent.send("GET", "/signin")
        let reply = try Self.crossSite(
            agent, "/signin", site: site, form: [("email", email), ("password", "a long passphrase")])
        #expect(reply.status == 403)
        #expect(reply.setCookies.allSatisfy { !$0.hasPrefix("session=") })
    }

    @Test(arguments: ["cross-site", "same-site"])
    func aConsentFromAnotherSiteIsRefusedDespiteAValidToken(site: String) throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let consentPage = try agent.send("GET", "/authorize?" + AuthorizationAttempt().query)
        #expect(consentPage.text.contains(#"action="/authorize/consent""#))
        let fields = TestAgent.hiddenFields(consentPage.text).filter { $0.0 != "csrf_token" }
        let reply = try Self.crossSite(
            agent, "/authorize/consent", site: site, form: fields + [("decision", "allow")])
        #expect(reply.status == 403)
        #expect(reply.header("Location") == nil)
        #expect(reply.text.contains("access_denied"))
        #expect(try app.sql("SELECT count(*) AS n FROM consents").first?.decode("n", as: Int.self) == 0)
        #expect(
            try app.sql("SELECT count(*) AS n FROM authorization_codes").first?.decode("n", as: Int.self) == 0
        )
    }
}
