import Foundation
import OIDC
import Testing
@testable import WebAuthnTestSupport

@testable import AuthServer

/// The `claims` parameter (Core §5.5), `acr` step-up (Core §3.1.2.1, §5.5.1.1), `id_token_hint`
/// at /authorize and the code flow without `nonce`, against a real server and database.
@Suite("OAuth claims, acr and id_token_hint")
struct ClaimsAndAuthenticationClassTests {
    /// The callback query (or error) of a GET /authorize that needs no page.
    static func silent(_ agent: TestAgent, _ attempt: AuthorizationAttempt) throws -> [String: String] {
        let reply = try agent.send("GET", "/authorize?" + attempt.query)
        try #require(reply.status == 303, "status \(reply.status): \(reply.text.prefix(300))")
        return TestAgent.queryItems(try #require(reply.header("Location")))
    }

    // MARK: - nonce (Core §3.1.2.1)

    /// A confidential client exempt from PKCE may omit `nonce`; the ID token then has none.
    @Test func anExemptConfidentialClientMayOmitNonce() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let query = FormEncoding.encode([
            ("response_type", "code"), ("client_id", "post-app"), ("redirect_uri", "https://post.example/cb"),
            ("scope", "openid"), ("state", "s1"),
        ])
        let reply = try agent.send("GET", "/authorize?" + query)
        #expect(reply.status == 303)
        let callback = TestAgent.queryItems(try #require(reply.header("Location")))
        let code = try #require(callback["code"], "\(callback)")
        let token = try app.token(
            [
                ("grant_type", "authorization_code"), ("code", code),
                ("redirect_uri", "https://post.example/cb"),
                ("client_id", "post-app"), ("client_secret", OAuthFixtures.webSecret),
            ], auth: nil)
        try #require(token.status == 200, "\(token.text)")
        let idToken = try app.claims(of: try #require(TokenSet(json: token.json).idToken), type: "JWT")
        #expect(idToken["nonce"] == nil)
        #expect(idToken["acr"] == .string("basic"))
    }

    /// A public client still needs PKCE, nonce or not.
    @Test func aPublicClientWithoutPKCEIsRefusedEvenWithNonce() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let query = FormEncoding.encode([
            ("response_type", "code"), ("client_id", "native-app"),
            ("redirect_uri", OAuthFixtures.nativeRedirect),
            ("scope", "openid"), ("state", "s1"), ("nonce", "n1"),
        ])
        let reply = try agent.send("GET", "/authorize?" + query)
        let callback = TestAgent.queryItems(try #require(reply.header("Location")))
        #expect(callback["error"] == "invalid_request")
        #expect(callback["code"] == nil)
    }

    // MARK: - claims (Core §5.5)

    /// Claims asked for beyond the scope are released in their member only, after consent
    /// covering their scopes, and survive code → token → refresh → userinfo.
    @Test func requestedClaimsSurviveTheWholeChain() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email, name: "Grace Hopper")
        let attempt = AuthorizationAttempt(
            scope: "openid offline_access",
            extra: [
                (
                    "claims",
                    #"{"id_token":{"email":{"essential":true}},"userinfo":{"name":{"essential":true}}}"#
                )
            ])
        // The consent page asks for the scopes of the requested claims too.
        let consent = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(consent.status == 200)
        #expect(consent.text.contains("See your email address"))
        let callback = try agent.authorize(attempt)
        let reply = try app.redeem(try #require(callback["code"]), attempt)
        try #require(reply.status == 200, "\(reply.text)")
        #expect(reply.json["scope"] as? String == "openid offline_access")
        let tokens = TokenSet(json: reply.json)
        let idToken = try app.claims(of: try #require(tokens.idToken), type: "JWT")
        #expect(idToken["email"] == .string(email))
        #expect(idToken["name"] == nil)
        #expect(idToken["acr"] == .string("basic"))
        #expect(try app.claims(of: tokens.accessToken, type: "at+jwt")["acr"] == .string("basic"))

        let userinfo = try app.userinfo(tokens.accessToken)
        #expect(userinfo.status == 200)
        #expect(userinfo.json["name"] as? String == "Grace Hopper")
        #expect(userinfo.json["email"] == nil)

        let consented = try app.sql(
            "SELECT scopes FROM consents WHERE client_id = 'web-app' AND account_id = \(try app.accountID(email: email))"
        ).first?.decode("scopes", as: [String].self)
        #expect(Set(consented ?? []) == ["openid", "offline_access", "email", "profile"])

        let refreshed = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken)),
        ])
        try #require(refreshed.status == 200, "\(refreshed.text)")
        let again = TokenSet(json: refreshed.json)
        let refreshedID = try app.claims(of: try #require(again.idToken), type: "JWT")
        #expect(refreshedID["email"] == .string(email))
        #expect(refreshedID["name"] == nil)
        #expect(refreshedID["acr"] == .string("basic"))
        let userinfoAgain = try app.userinfo(again.accessToken)
        #expect(userinfoAgain.json["name"] as? String == "Grace Hopper")
        #expect(userinfoAgain.json["email"] == nil)
    }

    /// A consent to `openid` alone does not release profile claims asked for later through
    /// `claims`: the user is asked again, and `prompt=none` gets `consent_required`.
    @Test func claimsBeyondAnEarlierConsentNeedANewConsent() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        _ = try agent.authorize(AuthorizationAttempt(scope: "openid"))
        let wider = AuthorizationAttempt(
            scope: "openid", extra: [("claims", #"{"userinfo":{"name":null}}"#), ("prompt", "none")])
        let callback = try Self.silent(agent, wider)
        #expect(callback["error"] == "consent_required")
        #expect(callback["code"] == nil)
        let interactive = AuthorizationAttempt(
            scope: "openid", extra: [("claims", #"{"userinfo":{"name":null}}"#)])
        let page = try agent.send("GET", "/authorize?" + interactive.query)
        #expect(page.status == 200)
        #expect(page.text.contains(#"action="/authorize/consent""#))
    }

    @Test(arguments: [
        #"{"id_token":"#, #"{"userinfo":["name"]}"#, #"{"id_token":{"name":{"essential":1}}}"#,
    ])
    func malformedClaimsAreInvalidRequest(_ claims: String) throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let callback = try Self.silent(agent, AuthorizationAttempt(extra: [("claims", claims)]))
        #expect(callback["error"] == "invalid_request")
        #expect(callback["code"] == nil)
    }

    // MARK: - acr

    static let essentialPHR = #"{"id_token":{"acr":{"essential":true,"values":["phr"]}}}"#

    /// A password session asked for a passkey: the sign-in page says so; under `prompt=none`
    /// a voluntary request proceeds with `basic`, an essential one is refused.
    @Test func aPasswordSessionIsAskedForAPasskey() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        _ = try agent.authorize(AuthorizationAttempt())  // consent once

        let stepUp = try agent.send(
            "GET", "/authorize?" + AuthorizationAttempt(extra: [("acr_values", "phr")]).query)
        #expect(stepUp.status == 303)
        let signIn = try #require(stepUp.header("Location"))
        #expect(signIn.hasPrefix("/signin?"))
        #expect(signIn.contains("step_up=passkey"))
        #expect(signIn.contains("prompt=login"))
        let page = try agent.send("GET", signIn)
        #expect(page.status == 200)
        #expect(page.text.contains("This app asks you to confirm with a passkey."))

        let voluntary = AuthorizationAttempt(extra: [("acr_values", "phr"), ("prompt", "none")])
        let code = try #require(try Self.silent(agent, voluntary)["code"])
        let tokens = try app.redeem(code, voluntary)
        let idToken = try app.claims(of: try #require(TokenSet(json: tokens.json).idToken), type: "JWT")
        #expect(idToken["acr"] == .string("basic"))

        let essential = try Self.silent(
            agent, AuthorizationAttempt(extra: [("claims", Self.essentialPHR), ("prompt", "none")]))
        #expect(essential["error"] == "unmet_authentication_requirements")
        #expect(essential["code"] == nil)
    }

    /// Signing in again with a password during the request does not meet an essential `phr`:
    /// refused, not asked again.
    @Test func anEssentialClassStillUnmetAfterSigningInIsRefused() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        _ = try agent.authorize(AuthorizationAttempt())
        let attempt = AuthorizationAttempt(extra: [("claims", Self.essentialPHR)])
        let stepUp = try agent.send("GET", "/authorize?" + attempt.query)
        let signIn = try #require(stepUp.header("Location"))
        #expect(signIn.contains("step_up=passkey"))
        let returnTo = try #require(TestAgent.queryItems("https://x.example" + signIn)["return_to"])
        Thread.sleep(forTimeInterval: 0.01)
        #expect(try agent.signIn(email: email, password: "correct horse battery").status == 200)
        let back = try agent.send("GET", returnTo)
        let callback = TestAgent.queryItems(try #require(back.header("Location")))
        #expect(callback["error"] == "unmet_authentication_requirements")
        #expect(callback["code"] == nil)
    }

    /// A device-bound passkey with user verification reaches `phrh`, in the ID token and the
    /// access token, and meets an essential request under `prompt=none`.
    @Test func aDeviceBoundPasskeyReachesPHRH() throws {
        let app = try OAuthFixtures.app()
        let owner = TestAgent(app)
        try owner.signUp(email: TestAgent.uniqueEmail())
        let authenticator = try SoftwareAuthenticator()
        #expect(try owner.registerPasskey(authenticator).status == 201)
        let handle = try owner.userHandle()
        let browser = TestAgent(app)
        #expect(try browser.signInWithPasskey(authenticator, userHandle: handle).status == 200)
        _ = try browser.authorize(AuthorizationAttempt())
        let attempt = AuthorizationAttempt(
            extra: [
                ("claims", #"{"id_token":{"acr":{"essential":true,"values":["phrh"]}}}"#), ("prompt", "none"),
            ])
        let code = try #require(try Self.silent(browser, attempt)["code"])
        let tokens = TokenSet(json: try app.redeem(code, attempt).json)
        #expect(try app.claims(of: try #require(tokens.idToken), type: "JWT")["acr"] == .string("phrh"))
        #expect(try app.claims(of: tokens.accessToken, type: "at+jwt")["acr"] == .string("phrh"))
    }

    // MARK: - id_token_hint (Core §3.1.2.1)

    @Test func idTokenHintForTheSessionsUserProceedsSilently() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        let hint = try #require(tokens.idToken)
        let callback = try Self.silent(
            agent, AuthorizationAttempt(extra: [("prompt", "none"), ("id_token_hint", hint)]))
        #expect(callback["code"] != nil, "\(callback)")
    }

    /// Someone else's ID token as the hint: `login_required` under `prompt=none`, the sign-in
    /// page otherwise; never a code for the signed-in user.
    @Test func idTokenHintForAnotherUserIsNeverAnsweredForTheSessionsUser() throws {
        let app = try OAuthFixtures.app()
        let (_, victimTokens) = try app.signedInFlow()
        let (attacker, _) = try app.signedInFlow()
        let hint = try #require(victimTokens.idToken)
        let silent = try Self.silent(
            attacker, AuthorizationAttempt(extra: [("prompt", "none"), ("id_token_hint", hint)]))
        #expect(silent["error"] == "login_required")
        #expect(silent["code"] == nil)
        let interactive = try attacker.send(
            "GET", "/authorize?" + AuthorizationAttempt(extra: [("id_token_hint", hint)]).query)
        #expect(interactive.status == 303)
        #expect(interactive.header("Location")?.hasPrefix("/signin?") == true)
    }

    /// A hint that is not an ID token of this server for this client: `invalid_request`.
    @Test func invalidIDTokenHintsAreRefused() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        for hint in ["garbage", tokens.accessToken] {
            let callback = try Self.silent(agent, AuthorizationAttempt(extra: [("id_token_hint", hint)]))
            #expect(callback["error"] == "invalid_request")
            #expect(callback["code"] == nil)
        }
        // An ID token issued to another client.
        let (nativeAgent, nativeTokens) = try app.signedInFlow(
            AuthorizationAttempt(
                clientID: "native-app", redirectURI: OAuthFixtures.nativeRedirect, scope: "openid"))
        let callback = try Self.silent(
            nativeAgent, AuthorizationAttempt(extra: [("id_token_hint", try #require(nativeTokens.idToken))]))
        #expect(callback["error"] == "invalid_request")
    }
}
