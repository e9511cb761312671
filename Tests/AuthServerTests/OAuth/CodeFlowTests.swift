import Foundation
import OIDC
import Synchronization
import Testing

@testable import AuthServer

@Suite("OAuth code flow")
struct CodeFlowTests {
    @Test func codeFlowWithConsentIssuesVerifiableTokensAndUserinfo() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email, name: "Ada Lovelace")
        let attempt = AuthorizationAttempt(extra: [("claims", #"{"id_token":{"email":null}}"#)])
        // The first request shows the consent page naming the client and its scopes.
        let consent = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(consent.status == 200)
        #expect(consent.text.contains("Web App"))
        #expect(consent.text.contains("See your email address"))
        #expect(consent.text.contains(email))
        #expect(consent.header("Cache-Control") == "no-store")
        // Browsers apply form-action to the redirect after the consent form: the client's
        // origin must be allowed, and no other.
        let policy = try #require(consent.header("Content-Security-Policy"))
        #expect(
            policy.hasSuffix(
                "form-action 'self' https://rp.example https://localhost com.example.app: http://127.0.0.1:* https://post.example"
            ))
        let callback = try agent.authorize(attempt)
        #expect(callback["state"] == attempt.state)
        #expect(callback["iss"] == app.configuration.issuer)
        let code = try #require(callback["code"])
        #expect(code.count >= 43)
        #expect(callback["_location"]?.hasPrefix(OAuthFixtures.webRedirect + "?code=") == true)

        let reply = try app.redeem(code, attempt)
        #expect(reply.status == 200)
        #expect(reply.header("Cache-Control") == "no-store")
        let tokens = TokenSet(json: reply.json)
        #expect(reply.json["token_type"] as? String == "Bearer")
        #expect(reply.json["scope"] as? String == "openid profile email offline_access")
        #expect(tokens.refreshToken != nil)

        let idToken = try app.claims(of: try #require(tokens.idToken), type: "JWT")
        #expect(idToken["iss"] == .string(app.configuration.issuer))
        #expect(idToken["aud"] == .string("web-app"))
        #expect(idToken["azp"] == .string("web-app"))
        #expect(idToken["nonce"] == .string(attempt.nonce))
        #expect(idToken["amr"] == .array([.string("pwd")]))
        #expect(idToken["auth_time"]?.intValue != nil)
        #expect(idToken["sid"]?.stringValue != nil)
        #expect(idToken["email"] == .string(email))
        #expect(idToken["name"] == nil)
        #expect(
            idToken["at_hash"]
                == .string(IDTokenClaims.accessTokenHash(tokens.accessToken, algorithm: .RS256)))

        let access = try app.claims(of: tokens.accessToken, type: "at+jwt")
        #expect(access["client_id"] == .string("web-app"))
        #expect(access["sub"] == idToken["sub"])

        let info = try app.userinfo(tokens.accessToken)
        #expect(info.status == 200)
        #expect(info.json["sub"] as? String == idToken["sub"]?.stringValue)
        #expect(info.json["email"] as? String == email)
        #expect(info.json["name"] as? String == "Ada Lovelace")
        let viaPost = try TestAgent.Reply(
            response: app.client.post(
                "/userinfo", form: [], headers: [("Authorization", "Bearer \(tokens.accessToken)")]))
        #expect(viaPost.status == 200)
        #expect(viaPost.json["email"] as? String == email)
    }

    @Test func consentIsRememberedAndCanBeRevokedOnTheAccountPage() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        // Second time: straight to the callback, no consent page.
        let pending = AuthorizationAttempt()
        let again = try agent.send("GET", "/authorize?" + pending.query)
        #expect(again.status == 303)
        let location = try #require(again.header("Location"))
        let pendingCode = try #require(TestAgent.queryItems(location)["code"])

        let apps = try agent.send("GET", "/account/apps")
        #expect(apps.status == 200)
        #expect(apps.text.contains("Web App"))
        let revoke = try agent.postForm("/account/apps/revoke", [("client_id", "web-app")])
        #expect(revoke.status == 303)
        #expect(!(try agent.send("GET", "/account/apps").text.contains("Web App")))
        let asked = try agent.send("GET", "/authorize?" + AuthorizationAttempt().query)
        #expect(asked.status == 200)
        #expect(asked.text.contains(#"action="/authorize/consent""#))
        // Withdrawing consent also revokes the client's tokens.
        let refresh = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken)),
        ])
        #expect(refresh.status == 400)
        #expect(refresh.error == "invalid_grant")
        #expect(try app.userinfo(tokens.accessToken).status == 401)
        // The attack: a code issued before the withdrawal, redeemed after it, started a live
        // family for the client the user had just disconnected. The withdrawal uses it up.
        let late = try app.redeem(pendingCode, pending)
        #expect(late.status == 400 && late.error == "invalid_grant")
    }

    @Test func deniedConsentRedirectsAccessDenied() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let callback = try agent.authorize(attempt, allowConsent: false)
        #expect(callback["error"] == "access_denied")
        #expect(callback["state"] == attempt.state)
        #expect(callback["iss"] == app.configuration.issuer)
    }

    /// The attack: a link to /authorize with a `decision=allow` of its own. The consent page
    /// carried every parameter into its form, ahead of the buttons, so pressing "Deny" posted
    /// `decision=allow` first, and the consent was stored and a code issued.
    @Test func aDecisionInTheRequestCannotAnswerTheConsentPage() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let attempt = AuthorizationAttempt(extra: [("decision", "allow")])
        let page = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(page.status == 200)
        #expect(!TestAgent.hiddenFields(page.text).contains { $0.0 == "decision" })
        let callback = try agent.authorize(attempt, allowConsent: false)
        #expect(callback["error"] == "access_denied")
        #expect(callback["code"] == nil)
        let stored = try app.sql(
            """
            SELECT count(*) AS n FROM consents c JOIN account_emails e ON e.account_id = c.account_id
            WHERE e.email = \(email)
            """
        ).first?.decode("n", as: Int.self)
        #expect(stored == 0)
        // A form that answers twice is no answer.
        let fields = TestAgent.hiddenFields(page.text).filter { $0.0 != "csrf_token" }
        let twice = try agent.postForm(
            "/authorize/consent", fields + [("decision", "allow"), ("decision", "deny")])
        #expect(twice.status == 400)
        #expect(twice.header("Location") == nil)
    }

    @Test func consentPostWithoutCSRFTokenIsRefused() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let page = try agent.send("GET", "/authorize?" + AuthorizationAttempt().query)
        let fields = TestAgent.hiddenFields(page.text).filter { $0.0 != "csrf_token" }
        let forged = try agent.postForm(
            "/authorize/consent", fields + [("decision", "allow")], withCSRF: false)
        #expect(forged.status == 403)
        #expect(forged.header("Location") == nil)
    }

    @Test func signInIsRequestedAndTheFlowResumesAfterIt() throws {
        let app = try OAuthFixtures.app()
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        let agent = TestAgent(app)
        let attempt = AuthorizationAttempt(
            clientID: "native-app", redirectURI: OAuthFixtures.nativeRedirect,
            extra: [("login_hint", email), ("ui_locales", "ja")])
        let first = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(first.status == 303)
        let signin = try #require(first.header("Location"))
        #expect(signin.hasPrefix("/signin?"))
        let items = TestAgent.queryItems("http://x" + signin)
        #expect(items["login_hint"] == email)
        #expect(items["ui_locales"] == "ja")
        let returnTo = try #require(items["return_to"])
        #expect(returnTo.hasPrefix("/authorize?"))
        #expect(returnTo.contains("resume="))
        let page = try agent.send("GET", signin)
        #expect(page.text.contains(email))
        #expect(page.text.contains(#"lang="ja""#))
        let signedIn = try agent.postForm(
            "/signin", [("email", email), ("password", "a long passphrase"), ("return_to", returnTo)])
        #expect(signedIn.header("Location") == returnTo)
        // First-party client: no consent page.
        let resumed = try agent.send("GET", returnTo)
        #expect(resumed.status == 303)
        let callback = TestAgent.queryItems(try #require(resumed.header("Location")))
        #expect(callback["state"] == attempt.state)
        let tokens = try app.redeem(try #require(callback["code"]), attempt, auth: nil)
        #expect(tokens.status == 200)
    }

    @Test func promptNoneWithoutSessionRedirectsLoginRequired() throws {
        let app = try OAuthFixtures.app()
        let attempt = AuthorizationAttempt(extra: [("prompt", "none")])
        let reply = try TestAgent(app).send("GET", "/authorize?" + attempt.query)
        #expect(reply.status == 303)
        let callback = TestAgent.queryItems(try #require(reply.header("Location")))
        #expect(callback["error"] == "login_required")
        #expect(callback["error_description"] == "The user must sign in. No user is signed in.")
        #expect(callback["state"] == attempt.state)
        #expect(callback["iss"] == app.configuration.issuer)
    }

    @Test func promptNoneWithoutConsentRedirectsConsentRequired() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let callback = TestAgent.queryItems(
            try #require(
                try agent.send("GET", "/authorize?" + AuthorizationAttempt(extra: [("prompt", "none")]).query)
                    .header("Location")))
        #expect(callback["error"] == "consent_required")
    }

    @Test func maxAgeForcesANewSignInWithALaterAuthTime() throws {
        let app = try OAuthFixtures.app()
        let email = TestAgent.uniqueEmail()
        let agent = TestAgent(app)
        try agent.signUp(email: email, password: "a long passphrase")
        let (_, first) = try app.signedInFlow(agent: agent)
        let firstIDToken = try #require(first.idToken)
        let firstAuthTime = try #require(try app.claims(of: firstIDToken)["auth_time"]?.intValue)
        Thread.sleep(forTimeInterval: 1.1)
        // Silent re-authorization keeps the original auth_time.
        let (_, silent) = try app.signedInFlow(agent: agent)
        #expect(try app.claims(of: try #require(silent.idToken))["auth_time"]?.intValue == firstAuthTime)

        let attempt = AuthorizationAttempt(extra: [("max_age", "0")])
        let reply = try agent.send("GET", "/authorize?" + attempt.query)
        let signin = try #require(reply.header("Location"))
        let items = TestAgent.queryItems("http://x" + signin)
        #expect(items["prompt"] == "login")
        let returnTo = try #require(items["return_to"])
        // Coming back without signing in again does not satisfy max_age.
        #expect(try agent.send("GET", returnTo).header("Location")?.hasPrefix("/signin?") == true)
        _ = try agent.postForm(
            "/signin", [("email", email), ("password", "a long passphrase"), ("return_to", returnTo)])
        let callback = TestAgent.queryItems(try #require(try agent.send("GET", returnTo).header("Location")))
        let tokens = TokenSet(json: try app.redeem(try #require(callback["code"]), attempt).json)
        let laterIDToken = try #require(tokens.idToken)
        let later = try #require(try app.claims(of: laterIDToken)["auth_time"]?.intValue)
        #expect(later > firstAuthTime)
        // A refresh keeps the re-authentication's auth_time.
        let refreshed = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken)),
        ])
        #expect(
            try app.claims(of: try #require(refreshed.json["id_token"] as? String))["auth_time"]?.intValue
                == later)
    }

    @Test func promptCreateSendsTheUserToSignUp() throws {
        let app = try OAuthFixtures.app()
        let reply = try TestAgent(app).send(
            "GET", "/authorize?" + AuthorizationAttempt(extra: [("prompt", "create")]).query)
        let location = try #require(reply.header("Location"))
        #expect(location.hasPrefix("/signup?return_to=%2Fauthorize%3F"))
    }

    @Test func expiredRowsArePurgedButLiveOnesStay() throws {
        let app = try OAuthFixtures.app()
        let (_, tokens) = try app.signedInFlow()
        _ = try TestAgent(app).send("GET", "/authorize?" + AuthorizationAttempt().query)
        try app.sql("UPDATE authorization_requests SET expires_at = now() - interval '1 second'")
        try app.sql("UPDATE authorization_codes SET expires_at = now() - interval '2 days'")
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        #expect(
            try app.sql("SELECT count(*) AS n FROM authorization_requests").first?.decode("n", as: Int.self)
                == 0)
        #expect(
            try app.sql("SELECT count(*) AS n FROM authorization_codes").first?.decode("n", as: Int.self) == 0
        )
        #expect(try app.userinfo(tokens.accessToken).status == 200)
        #expect(
            try app.token([
                ("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken)),
            ]).status == 200)
    }

    @Test func selectAccountLetsTheUserSignInAsSomeoneElse() throws {
        let app = try OAuthFixtures.app()
        let other = TestAgent.uniqueEmail("other")
        try TestAgent(app).signUp(email: other, password: "a long passphrase")
        let (agent, first) = try app.signedInFlow()
        let firstSubject = try app.claims(of: try #require(first.idToken))["sub"]
        let attempt = AuthorizationAttempt(extra: [("prompt", "select_account")])
        // The chooser lists the signed-in account and offers another.
        let chooser = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(chooser.status == 200)
        let link = try #require(
            chooser.text.firstMatch(of: /href="([^"]*)" id="use-another-account"/).map { String($0.1) })
        let returnTo = try #require(TestAgent.queryItems("http://x" + TestAgent.unescape(link))["return_to"])
        _ = try agent.postForm(
            "/signin", [("email", other), ("password", "a long passphrase"), ("return_to", returnTo)])
        // The other account has not approved the client yet.
        let consent = try agent.send("GET", returnTo)
        #expect(consent.text.contains(other))
        let fields = TestAgent.hiddenFields(consent.text).filter { $0.0 != "csrf_token" }
        let callback = TestAgent.queryItems(
            try #require(
                try agent.postForm("/authorize/consent", fields + [("decision", "allow")]).header("Location"))
        )
        let tokens = TokenSet(json: try app.redeem(try #require(callback["code"]), attempt).json)
        let subject = try app.claims(of: try #require(tokens.idToken))["sub"]
        #expect(subject != nil && subject != firstSubject)
    }

    @Test func aCodeRedeemedConcurrentlyWorksOnlyOnce() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        let statuses = Mutex<[Int]>([])
        let client = app.client
        let form = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI),
            ("code_verifier", attempt.verifier),
        ]
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let status =
                (try? client.post("/token", form: form, headers: [OAuthFixtures.basic()]).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0.sorted() } == [200, 400, 400, 400])
    }

    @Test func promptLoginAsksAgainEvenWithASession() throws {
        let app = try OAuthFixtures.app()
        let (agent, _) = try app.signedInFlow()
        let reply = try agent.send(
            "GET", "/authorize?" + AuthorizationAttempt(extra: [("prompt", "login")]).query)
        #expect(reply.header("Location")?.hasPrefix("/signin?") == true)
        #expect(reply.header("Location")?.contains("prompt=login") == true)
    }

    @Test(arguments: [
        (
            "client_id=unknown&redirect_uri=https%3A%2F%2Frp.example%2Fcallback&response_type=code",
            "invalid_client"
        ),
        (
            "client_id=web-app&redirect_uri=https%3A%2F%2Fevil.example%2Fcallback&response_type=code",
            "invalid_request"
        ),
        ("client_id=web-app&response_type=code&scope=openid", "invalid_request"),
        (
            "client_id=web-app&redirect_uri=https%3A%2F%2Frp.example%2Fcallback%23x&response_type=code",
            "invalid_request"
        ),
    ])
    func untrustedClientOrRedirectURIGetsAnErrorPageNeverARedirect(_ query: String, _ code: String) throws {
        let app = try OAuthFixtures.app()
        let reply = try TestAgent(app).send("GET", "/authorize?" + query)
        #expect(reply.status == 400)
        #expect(reply.header("Location") == nil)
        #expect(reply.text.contains(code))
    }

    @Test func otherErrorsAreRedirectedWithStateAndIssuer() throws {
        let app = try OAuthFixtures.app()
        var attempt = AuthorizationAttempt()
        // A request object that is not a JWS at all (signed request objects are verified, RFC 9101).
        attempt.extra = [("request", "eyJ.x.y")]
        let reply = try TestAgent(app).send("GET", "/authorize?" + attempt.query)
        let callback = TestAgent.queryItems(try #require(reply.header("Location")))
        #expect(callback["error"] == "invalid_request_object")
        #expect(callback["state"] == attempt.state)
        let plain =
            "response_type=code&client_id=web-app&redirect_uri=https%3A%2F%2Frp.example%2Fcallback&scope=openid&state=s1&code_challenge=abc&code_challenge_method=plain"
        let refused = TestAgent.queryItems(
            try #require(try TestAgent(app).send("GET", "/authorize?" + plain).header("Location")))
        #expect(refused["error"] == "invalid_request")
        #expect(
            refused["error_description"]
                == "The request is missing a required parameter, has an invalid or duplicated parameter, or is otherwise malformed. The 'code_challenge_method' 'plain' is not allowed; use 'S256'."
        )
        #expect(refused["state"] == "s1")
    }

    @Test func postAuthorizationRequestsWorkLikeGet() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt(
            clientID: "native-app", redirectURI: "http://127.0.0.1:53123/callback")
        let fields =
            URLComponents(string: "http://x/?" + attempt.query)?.queryItems?.map { ($0.name, $0.value ?? "") }
            ?? []
        let reply = try agent.postForm("/authorize", fields, withCSRF: false)
        #expect(reply.status == 303)
        let location = try #require(reply.header("Location"))
        #expect(location.hasPrefix("http://127.0.0.1:53123/callback?code="))
    }

    @Test func formPostResponseModeRendersAnAutoSubmittingFormAllowedByThePolicy() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt(
            clientID: "post-app", redirectURI: "https://post.example/cb", scope: "openid",
            extra: [("response_mode", "form_post")])
        let reply = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(reply.status == 200)
        #expect(reply.text.contains(#"action="https://post.example/cb""#))
        #expect(reply.text.contains(#"src="/static/js/form_post.js""#))
        #expect(reply.text.contains("form-post-continue"))
        let fields = Dictionary(uniqueKeysWithValues: TestAgent.hiddenFields(reply.text))
        #expect(fields["state"] == attempt.state)
        #expect(fields["iss"] == app.configuration.issuer)
        #expect(fields["code"] != nil)
        let policy = try #require(reply.header("Content-Security-Policy"))
        #expect(policy.contains("form-action https://post.example"))
        #expect(policy.contains("script-src 'self'"))
        #expect(!policy.contains("unsafe-inline"))
    }
}
