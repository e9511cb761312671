import Foundation
import OIDC
import Testing

@testable import AuthServer

/// Refusals of the code flow, driven end to end through /authorize and /token by a signed-in
/// browser, so that each would fail if its check were removed.
@Suite("OAuth: refusals through /authorize and /token")
struct AuthorizationRefusalTests {
    static let loopbackWeb = "http://127.0.0.1:8080/cb"

    static func app() throws -> TestApplication {
        try OAuthFixtures.app { configuration in
            configuration.clients.append(
                ClientMetadata(
                    clientID: "loopback-web", redirectURIs: [loopbackWeb],
                    tokenEndpointAuthMethod: .clientSecretBasic,
                    clientSecretHash: ClientSecret.hash(OAuthFixtures.webSecret)))
        }
    }

    static func signedIn(_ app: TestApplication) throws -> TestAgent {
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        return agent
    }

    static func codeCount(_ app: TestApplication) throws -> Int? {
        try app.sql("SELECT count(*) AS n FROM authorization_codes").first?.decode("n", as: Int.self)
    }

    /// RFC 8252 §7.3 lets the port vary for native apps only: a web client that registered
    /// port 8080 must not have its code sent to whatever listens on port 9999.
    @Test func aWebClientsLoopbackRedirectOnAnotherPortGetsAnErrorPageNeverACode() throws {
        let app = try Self.app()
        let agent = try Self.signedIn(app)
        var attempt = AuthorizationAttempt(clientID: "loopback-web", redirectURI: "http://127.0.0.1:9999/cb")
        let refused = try agent.send("GET", "/authorize?" + attempt.query)
        #expect(refused.status == 400)
        #expect(refused.header("Location") == nil)
        #expect(refused.text.contains("invalid_request"))
        #expect(try Self.codeCount(app) == 0)

        // The registered port itself works (so the refusal above is about the port).
        attempt.redirectURI = Self.loopbackWeb
        let callback = try agent.authorize(attempt)
        #expect(callback["_location"]?.hasPrefix(Self.loopbackWeb + "?") == true)
        #expect(callback["code"] != nil)
    }

    /// WCAG 2.1 SC 3.1.2: a Japanese error page says what went wrong in Japanese; the OAuth
    /// code stays, marked as English, and the English `error_description` is not on the page.
    @Test func aJapaneseErrorPageIsInJapaneseWithTheCodeMarkedEnglish() throws {
        let app = try Self.app()
        let agent = try Self.signedIn(app)
        let attempt = AuthorizationAttempt(clientID: "loopback-web", redirectURI: "http://127.0.0.1:9999/cb")
        let refused = try agent.send("GET", "/authorize?" + attempt.query + "&ui_locales=ja")
        #expect(refused.status == 400)
        #expect(refused.text.contains("<html lang=\"ja\">"))
        #expect(refused.text.contains("戻り先 (redirect_uri) はこのアプリケーションに登録されていません。"))
        #expect(refused.text.contains("<code lang=\"en\" id=\"error-code\">invalid_request</code>"))
        #expect(!refused.text.contains("is not registered for this client"))
        #expect(!refused.text.contains("The request is missing a required parameter"))

        let english = try agent.send("GET", "/authorize?" + attempt.query + "&ui_locales=en")
        #expect(english.text.contains("The 'redirect_uri' is not registered for this client."))
    }

    @Test func aNativeClientsLoopbackRedirectMayUseAnyPort() throws {
        let app = try Self.app()
        let agent = try Self.signedIn(app)
        let attempt = AuthorizationAttempt(
            clientID: "native-app", redirectURI: "http://127.0.0.1:9999/callback")
        let callback = try agent.authorize(attempt)
        #expect(callback["_location"]?.hasPrefix("http://127.0.0.1:9999/callback?") == true)
        let code = try #require(callback["code"])
        #expect(try app.redeem(code, attempt, auth: nil).status == 200)
    }

    /// RFC 6749 §4.1.3: the code must have been issued to the authenticated client. Another
    /// client that presents it (with the right redirect URI and verifier, as a thief would)
    /// gets `invalid_grant` and no token; the code is consumed by the attempt, so the owner's
    /// later redemption is refused too (a code seen by another client counts as leaked).
    @Test func redeemingAnotherClientsCodeIsRefusedAndBurnsTheCode() throws {
        let app = try Self.app()
        let agent = try Self.signedIn(app)
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        let stolen = try app.token(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI),
                ("code_verifier", attempt.verifier), ("client_id", "post-app"),
                ("client_secret", OAuthFixtures.webSecret),
            ], auth: nil)
        #expect(stolen.status == 400)
        #expect(stolen.error == "invalid_grant")
        #expect(
            stolen.json["error_description"] as? String == OAuthErrorCode.invalidGrant.fixedDescription
                + " The authorization code was issued to another client.")
        #expect(stolen.json["access_token"] == nil && stolen.json["id_token"] == nil)
        #expect(
            try app.sql("SELECT count(*) AS n FROM access_tokens").first?.decode("n", as: Int.self) == 0)

        let owner = try app.redeem(code, attempt)
        #expect(owner.error == "invalid_grant")
        #expect(
            try app.sql("SELECT count(*) AS n FROM authorization_codes WHERE consumed_at IS NOT NULL").first?
                .decode("n", as: Int.self) == 1)
    }

    /// RFC 7636 §4.4.1: a client that must use PKCE and sends no `code_challenge` gets
    /// `invalid_request` at its redirect URI (with `state` and `iss`), and no code.
    @Test(arguments: [
        ("native-app", "com.example.app:/callback"), ("web-app", OAuthFixtures.webRedirect),
    ])
    func anAuthorizationRequestWithoutPKCEIsRedirectedWithInvalidRequest(
        _ clientID: String, _ redirectURI: String
    )
        throws
    {
        let app = try Self.app()
        let agent = try Self.signedIn(app)
        let state = "st-pkce"
        let query = FormEncoding.encode([
            (name: "response_type", value: "code"), (name: "client_id", value: clientID),
            (name: "redirect_uri", value: redirectURI), (name: "scope", value: "openid"),
            (name: "state", value: state), (name: "nonce", value: "n-1"),
        ])
        let reply = try agent.send("GET", "/authorize?" + query)
        #expect(reply.status == 303)
        let location = try #require(reply.header("Location"))
        #expect(location.hasPrefix(redirectURI + "?"))
        let callback = TestAgent.queryItems(location)
        #expect(callback["error"] == "invalid_request")
        #expect(
            callback["error_description"]
                == OAuthErrorCode.invalidRequest.fixedDescription
                + " PKCE is required: the 'code_challenge' parameter is missing.")
        #expect(callback["state"] == state)
        #expect(callback["iss"] == app.configuration.issuer)
        #expect(callback["code"] == nil)
        #expect(try Self.codeCount(app) == 0)
    }
}
