import Foundation
import OIDC
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// Several accounts in one browser: the session set (bound, same-account replacement,
/// fixation), the chooser at `/authorize` and `/accounts`, and signing out of one or all.
@Suite("Account chooser")
struct AccountChooserTests {
    static let password = "a long passphrase"

    /// A browser signed in as two accounts (`second` current), and both accounts' session ids.
    static func twoAccounts(_ app: TestApplication) throws -> (
        agent: TestAgent, first: (email: String, session: String), second: (email: String, session: String)
    ) {
        let first = TestAgent.uniqueEmail("first")
        let second = TestAgent.uniqueEmail("second")
        let agent = TestAgent(app)
        try agent.signUp(email: first, password: password, name: "First Person")
        try TestAgent(app).signUp(email: second, password: password, name: "Second Person")
        let one = try agent.signIn(email: first, password: password)
        let two = try agent.signIn(email: second, password: password)
        return (
            agent, (first, one.json["session_id"] as? String ?? ""),
            (second, two.json["session_id"] as? String ?? "")
        )
    }

    /// `twoAccounts`, and an ID token of the first account, obtained while it was current;
    /// then the second is current again.
    static func twoAccountsWithAHintForTheFirst(_ app: TestApplication) throws -> (
        agent: TestAgent, first: (email: String, session: String), second: (email: String, session: String),
        hint: String
    ) {
        let (agent, first, second) = try twoAccounts(app)
        _ = try agent.postForm("/accounts/switch", [("session_id", first.session)])
        let (_, tokens) = try app.signedInFlow(agent: agent)
        let hint = try #require(tokens.idToken)
        _ = try agent.postForm("/accounts/switch", [("session_id", second.session)])
        return (agent, first, second, hint)
    }

    static func live(_ app: TestApplication, _ sessionID: String) throws -> Bool {
        try app.sql(
            """
            SELECT count(*) AS n FROM authentication_sessions
            WHERE id = \(UUID(uuidString: sessionID)) AND revoked_at IS NULL
            """
        ).first?.decode("n", as: Int.self) == 1
    }

    static func subject(_ app: TestApplication, _ callback: [String: String], _ attempt: AuthorizationAttempt)
        throws -> String?
    {
        let tokens = TokenSet(json: try app.redeem(try #require(callback["code"]), attempt).json)
        return try app.claims(of: try #require(tokens.idToken))["sub"]?.stringValue
    }

    static func accountID(_ app: TestApplication, email: String) throws -> String {
        try #require(
            try app.sql("SELECT account_id FROM account_emails WHERE email = \(email)").first?.decode(
                "account_id", as: UUID.self)
        ).uuidString.lowercased()
    }

    // MARK: - The session set

    @Test func signingInAsASecondAccountKeepsTheFirst() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, second) = try Self.twoAccounts(app)
        #expect(try Self.live(app, first.session))
        #expect(try Self.live(app, second.session))
        #expect(agent.cookies["accounts"]?.split(separator: ".").count == 1)
        let page = try agent.send("GET", "/accounts")
        #expect(page.status == 200)
        #expect(page.text.contains(first.email) && page.text.contains(second.email))
        #expect(page.text.contains(#"lang="en""#) && page.text.contains("<main"))
    }

    @Test func signingInAgainAsTheSameAccountReplacesOnlyItsSession() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, second) = try Self.twoAccounts(app)
        let again = try agent.signIn(email: first.email, password: Self.password)
        #expect(try !Self.live(app, first.session))
        #expect(try Self.live(app, second.session))
        #expect(try Self.live(app, try #require(again.json["session_id"] as? String)))
        #expect(agent.cookies["accounts"]?.split(separator: ".").count == 1)
    }

    @Test func aPasskeySignInAddsTheAccountToo() throws {
        let app = try OAuthFixtures.app()
        let owner = TestAgent(app)
        let email = TestAgent.uniqueEmail("passkey")
        try owner.signUp(email: email, password: Self.password)
        let authenticator = try SoftwareAuthenticator()
        #expect(try owner.registerPasskey(authenticator).status == 201)
        let handle: [UInt8] = try #require(
            try app.sql(
                """
                SELECT a.webauthn_user_handle FROM accounts a JOIN account_emails e ON e.account_id = a.id
                WHERE e.email = \(email)
                """
            ).first?.decode("webauthn_user_handle"))
        let browser = TestAgent(app)
        let first = TestAgent.uniqueEmail("first")
        try browser.signUp(email: first, password: Self.password)
        let firstSession = try #require(browser.cookies["session"])
        let reply = try browser.signInWithPasskey(authenticator, userHandle: handle)
        #expect(reply.status == 200)
        #expect(browser.cookies["accounts"] == firstSession)
        #expect(try Self.live(app, try #require(reply.json["session_id"] as? String)))
        let accounts = try browser.send("GET", "/accounts").text
        #expect(accounts.contains(email) && accounts.contains(first))
    }

    @Test func aBrowserHoldsAtMostFiveAccounts() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        var sessions: [String] = []
        for index in 0..<6 {
            let email = TestAgent.uniqueEmail("bound\(index)")
            try TestAgent(app).signUp(email: email, password: Self.password)
            sessions.append(
                try #require(
                    try agent.signIn(email: email, password: Self.password).json["session_id"] as? String))
        }
        // The least recently current account's session ended; the other five stay.
        #expect(try !Self.live(app, sessions[0]))
        for session in sessions.dropFirst() { #expect(try Self.live(app, session)) }
        #expect(agent.cookies["accounts"]?.split(separator: ".").count == SessionCookies.maxAccounts - 1)
    }

    /// Fixation: whatever tokens the browser sends, a sign-in answers with a fresh one, and
    /// a malformed accounts cookie is ignored, not an error.
    @Test func aSignInNeverAdoptsATokenTheBrowserSent() throws {
        let app = try OAuthFixtures.app()
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: Self.password)
        let attacker = TestAgent(app)
        try attacker.signUp(email: TestAgent.uniqueEmail("attacker"), password: Self.password)
        let planted = try #require(attacker.cookies["session"])
        let victim = TestAgent(app)
        victim.cookies["session"] = planted
        victim.cookies["accounts"] = "x.%%%%.." + String(repeating: "z", count: 65) + "." + planted
        let reply = try victim.signIn(email: email, password: Self.password)
        #expect(reply.status == 200)
        #expect(victim.cookies["session"] != planted)
        #expect(
            try app.sql(
                "SELECT 1 FROM authentication_sessions WHERE token_digest = \(SessionStore.digest(try #require(victim.cookies["session"])))"
            ).count == 1)
    }

    // MARK: - Switching and signing out

    /// The attack: choosing a session of another browser (its id is shown to its owner only,
    /// but ids are not secrets) must not make it current.
    @Test func aSessionOfAnotherBrowserCannotBeChosen() throws {
        let app = try OAuthFixtures.app()
        let victim = TestAgent(app)
        let victimSession = try #require(
            try victim.signUp(email: TestAgent.uniqueEmail("victim")).json["session_id"] as? String)
        let attacker = TestAgent(app)
        try attacker.signUp(email: TestAgent.uniqueEmail("attacker"))
        let before = attacker.cookies["session"]
        let reply = try attacker.postForm(
            "/accounts/switch", [("session_id", victimSession), ("return_to", "/account")])
        #expect(reply.status == 303)
        #expect(reply.header("Location")?.hasPrefix("/accounts") == true)
        #expect(attacker.cookies["session"] == before)
        let attempt = AuthorizationAttempt(extra: [("prompt", "select_account")])
        let chooser = try attacker.send("GET", "/authorize?" + attempt.query)
        let fields = TestAgent.hiddenFields(chooser.text).filter {
            $0.0 != "csrf_token" && $0.0 != "return_to"
        }
        let select = try attacker.postForm("/authorize/select", fields + [("session_id", victimSession)])
        #expect(select.status == 200)
        #expect(select.text.contains(#"action="/authorize/select""#))
        #expect(try Self.live(app, victimSession))
    }

    @Test func switchingMakesTheChosenAccountCurrent() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, _) = try Self.twoAccounts(app)
        let reply = try agent.postForm(
            "/accounts/switch", [("session_id", first.session), ("return_to", "/account")])
        #expect(reply.header("Location") == "/account")
        let page = try agent.send("GET", "/account")
        #expect(page.text.contains(#"<strong id="account-email">\#(first.email)</strong>"#))
        #expect(page.text.contains(#"id="switch-account""#))
    }

    @Test func aForgedSignOutEndsNothing() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, second) = try Self.twoAccounts(app)
        _ = try agent.postForm("/accounts/signout", [("all", "1")], withCSRF: false)
        #expect(try Self.live(app, first.session))
        #expect(try Self.live(app, second.session))
    }

    @Test func signingOutOfOneAccountKeepsTheOther() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, second) = try Self.twoAccounts(app)
        let reply = try agent.postForm(
            "/accounts/signout", [("session_id", second.session), ("return_to", "/account")])
        #expect(reply.header("Location") == "/account")
        #expect(try !Self.live(app, second.session))
        #expect(try Self.live(app, first.session))
        // The remaining account is now the current one.
        #expect(try agent.send("GET", "/account").text.contains(first.email))
        #expect(agent.cookies["accounts"] == nil)
    }

    /// Back-channel logout follows the session that ended, and only it (OpenID Connect
    /// Back-Channel Logout 1.0 §2.5: the token's `sid` names that session).
    @Test func signingOutOfOneAccountTellsOnlyItsClients() throws {
        let receiver = try LogoutReceiver(failures: 0)
        let app = try OAuthFixtures.app(backchannelURI: receiver.uri)
        let (agent, first, second) = try Self.twoAccounts(app)
        _ = try app.signedInFlow(agent: agent)
        _ = try agent.postForm("/accounts/switch", [("session_id", first.session)])
        _ = try app.signedInFlow(agent: agent)
        #expect(
            try app.sql("SELECT count(*) AS n FROM session_clients").first?.decode("n", as: Int.self) == 2)
        _ = try agent.postForm("/accounts/signout", [("session_id", second.session)])
        let bodies = receiver.waitFor(1)
        try #require(bodies.count == 1)
        let token = try #require(TestAgent.queryItems("http://x/?" + bodies[0])["logout_token"])
        let claims = try app.verifier().verify(token, expectedType: "logout+jwt").decodePayload(
            as: [String: OIDC.JSONValue].self)
        #expect(claims["sid"] == .string(second.session))
        #expect(
            try app.sql("SELECT count(*) AS n FROM backchannel_logout_deliveries").first?.decode(
                "n", as: Int.self) == 1)
    }

    @Test func signingOutOfAllAccountsEndsEverySession() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, second) = try Self.twoAccounts(app)
        let reply = try agent.postForm("/accounts/signout", [("all", "1")])
        #expect(reply.header("Location") == "/signin")
        #expect(try !Self.live(app, first.session))
        #expect(try !Self.live(app, second.session))
        #expect(agent.cookies["session"] == nil && agent.cookies["accounts"] == nil)
    }

    // MARK: - /authorize

    /// The current account's session ended on its own (revoked from the session list, or by
    /// RP-initiated logout): the other accounts are offered, not the sign-in page.
    @Test func withNoCurrentAccountTheOthersAreOffered() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, second) = try Self.twoAccounts(app)
        #expect(try agent.send("DELETE", "/api/sessions/\(second.session)").status == 204)
        #expect(agent.cookies["session"] == nil)
        #expect(try agent.send("GET", "/account").header("Location") == "/accounts")
        let chooser = try agent.send("GET", "/authorize?" + AuthorizationAttempt().query)
        #expect(chooser.status == 200)
        #expect(chooser.text.contains(first.email) && !chooser.text.contains(second.email))
        let silent = try agent.send(
            "GET", "/authorize?" + AuthorizationAttempt(extra: [("prompt", "none")]).query)
        #expect(
            TestAgent.queryItems(try #require(silent.header("Location")))["error"]
                == "account_selection_required")
    }

    @Test func selectAccountShowsTheChooserAndContinuesAsTheChosenAccount() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, _) = try Self.twoAccounts(app)
        let attempt = AuthorizationAttempt(extra: [("prompt", "select_account")])
        let chooser = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(chooser.status == 200)
        #expect(chooser.text.contains(#"action="/authorize/select""#))
        #expect(chooser.text.contains("Web App"))
        #expect(chooser.text.contains(#"id="use-another-account""#))
        let fields = TestAgent.hiddenFields(chooser.text).filter {
            $0.0 != "csrf_token" && $0.0 != "return_to"
        }
        var reply = try agent.postForm("/authorize/select", fields + [("session_id", first.session)])
        if reply.status == 200, reply.text.contains(#"action="/authorize/consent""#) {
            // "Not you?" leads to the chooser of this browser's accounts.
            #expect(reply.text.contains(#"href="/accounts?return_to=%2Fauthorize%3F"#))
            let consent = TestAgent.hiddenFields(reply.text).filter { $0.0 != "csrf_token" }
            #expect(consent.contains { $0.0 == AuthorizeFlow.accountSelectedField })
            reply = try agent.postForm("/authorize/consent", consent + [("decision", "allow")])
        }
        let callback = TestAgent.queryItems(try #require(reply.header("Location")))
        #expect(try Self.subject(app, callback, attempt) == (try Self.accountID(app, email: first.email)))
    }

    /// The attack: a client that learned one account's session id (the `sid` of its ID tokens)
    /// puts `session_id` in its request. The chooser carried it into its form ahead of the
    /// account buttons, so whichever account the user pressed, the client's choice won.
    @Test func aSessionIDInTheRequestCannotChooseTheAccount() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, second) = try Self.twoAccounts(app)
        let attempt = AuthorizationAttempt(extra: [("prompt", "select_account"), ("session_id", first.session)])
        let chooser = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(chooser.text.contains(#"action="/authorize/select""#))
        let fields = TestAgent.hiddenFields(chooser.text).filter {
            $0.0 != "csrf_token" && $0.0 != "return_to"
        }
        #expect(!fields.contains { $0.0 == "session_id" })
        var reply = try agent.postForm("/authorize/select", fields + [("session_id", second.session)])
        if reply.status == 200, reply.text.contains(#"action="/authorize/consent""#) {
            let consent = TestAgent.hiddenFields(reply.text).filter { $0.0 != "csrf_token" }
            reply = try agent.postForm("/authorize/consent", consent + [("decision", "allow")])
        }
        let callback = TestAgent.queryItems(try #require(reply.header("Location")))
        #expect(try Self.subject(app, callback, attempt) == (try Self.accountID(app, email: second.email)))
        // A form that chooses twice is no choice: the chooser again.
        let twice = try agent.postForm(
            "/authorize/select", fields + [("session_id", first.session), ("session_id", second.session)])
        #expect(twice.status == 200)
        #expect(twice.text.contains(#"action="/authorize/select""#))
    }

    @Test func promptNoneWithALoginHintForAnotherSignedInAccountNeedsAChoice() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, _) = try Self.twoAccounts(app)
        let hinted = AuthorizationAttempt(extra: [("login_hint", first.email)])
        let chooser = try agent.send("GET", "/authorize?" + hinted.query)
        #expect(chooser.status == 200)
        #expect(chooser.text.contains(#"action="/authorize/select""#))
        #expect(chooser.text.contains("autofocus"))
        let silent = AuthorizationAttempt(extra: [("login_hint", first.email), ("prompt", "none")])
        let callback = TestAgent.queryItems(
            try #require(try agent.send("GET", "/authorize?" + silent.query).header("Location")))
        #expect(callback["error"] == "account_selection_required")
    }

    /// RP-initiated logout from the app of an account that is signed in but not current: the
    /// hint names that account's session, so that session ends (at once, as for the current
    /// one) and the current account stays. It used to ask, then end the current account and
    /// leave the named one signed in, while its app was told the logout had happened.
    @Test func rpInitiatedLogoutEndsTheSessionTheHintNamesNotTheCurrentOne() throws {
        let app = try OAuthFixtures.app()
        let (agent, first, second, hint) = try Self.twoAccountsWithAHintForTheFirst(app)
        let logout = try agent.send(
            "GET",
            "/logout?"
                + FormEncoding.encode([
                    (name: "id_token_hint", value: hint),
                    (name: "post_logout_redirect_uri", value: "https://rp.example/signed-out"),
                    (name: "state", value: "s"),
                ]))
        #expect(logout.status == 303)
        #expect(logout.header("Location") == "https://rp.example/signed-out?state=s")
        #expect(try !Self.live(app, first.session))
        #expect(try Self.live(app, second.session))
        let page = try agent.send("GET", "/account")
        #expect(page.text.contains(#"<strong id="account-email">\#(second.email)</strong>"#))
        let chooser = try agent.send("GET", "/accounts")
        #expect(!chooser.text.contains(first.email))
    }

    @Test func anIDTokenHintForTheOtherSignedInAccountShowsTheChooser() throws {
        let app = try OAuthFixtures.app()
        let (agent, _, _, hint) = try Self.twoAccountsWithAHintForTheFirst(app)
        let interactive = try agent.send(
            "GET", "/authorize?" + AuthorizationAttempt(extra: [("id_token_hint", hint)]).query)
        #expect(interactive.status == 200)
        #expect(interactive.text.contains(#"action="/authorize/select""#))
        let silent = try agent.send(
            "GET",
            "/authorize?" + AuthorizationAttempt(extra: [("id_token_hint", hint), ("prompt", "none")]).query)
        #expect(TestAgent.queryItems(try #require(silent.header("Location")))["error"] == "login_required")
    }
}

/// The session set's rules, without a database.
@Suite("Browser sessions")
struct BrowserSessionsTests {
    static let a = String(repeating: "a", count: 43)
    static let b = String(repeating: "b", count: 43)
    static let c = String(repeating: "c", count: 43)

    @Test func theAccountsCookieDropsMalformedRepeatedAndSurplusTokens() {
        let tokens = (0..<8).map { String(repeating: String($0), count: 43) }
        let browser = BrowserSessions(
            current: Self.a,
            accountsCookie: ([Self.a, "bad token", "", Self.b, Self.b] + tokens).joined(separator: "."))
        #expect(browser.current == Self.a)
        #expect(browser.others.count == SessionCookies.maxAccounts - 1)
        #expect(browser.others.first == Self.b)
        #expect(!browser.others.contains(Self.a))
    }

    @Test func switchingMovesThePreviousAccountToTheFront() {
        let browser = BrowserSessions(current: Self.a, others: [Self.b, Self.c]).switching(to: Self.c)
        #expect(browser == BrowserSessions(current: Self.c, others: [Self.a, Self.b]))
    }

    @Test func signingOutOfTheCurrentAccountMakesTheNextCurrent() {
        let browser = BrowserSessions(current: Self.a, others: [Self.b, Self.c])
        #expect(browser.removing(Self.a) == BrowserSessions(current: Self.b, others: [Self.c]))
        #expect(browser.removing(Self.c) == BrowserSessions(current: Self.a, others: [Self.b]))
    }

    @Test func aSignInBeyondTheBoundEndsTheLeastRecentlyCurrent() {
        let live = (0..<5).map { String(repeating: String($0), count: 43) }
        let (kept, ended) = BrowserSessions.bounded(live)
        #expect(kept == Array(live.prefix(4)))
        #expect(ended == [live[4]])
    }
}
