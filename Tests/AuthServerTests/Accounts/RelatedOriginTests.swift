import Crypto
import Foundation
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// Passkey sign-in from a WebAuthn related origin (WebAuthn Level 3 §5.11): CORS for exactly
/// the configured origins, CSRF through a token bound to the calling origin, and the
/// ceremony's `clientDataJSON.origin` accepted only when configured.
@Suite("Related origins: CORS, CSRF and the ceremony origin")
struct RelatedOriginTests {
    static let shop = "https://shop.example"
    static let outlet = "https://outlet.example"
    static let evil = "https://evil.example"

    static func app() throws -> TestApplication {
        try TestApplication { $0.webAuthn.relatedOrigins = [shop, outlet] }
    }

    /// A browser on `origin` calling across sites (what Chromium sends on such a fetch).
    static func agent(_ app: TestApplication, _ origin: String) -> TestAgent {
        TestAgent(app, origin: origin)
    }

    static let crossSite = [("Sec-Fetch-Site", "cross-site")]

    static func token(_ agent: TestAgent, origin: String) throws -> TestAgent.Reply {
        try agent.send("GET", "/api/related-origins/csrf", headers: [("Origin", origin)] + crossSite)
    }

    static func preflight(_ app: TestApplication, _ origin: String, path: String) throws -> TestAgent.Reply {
        try agent(app, origin).send(
            "OPTIONS", path, csrf: false,
            headers: [
                ("Access-Control-Request-Method", "POST"),
                ("Access-Control-Request-Headers", "content-type,x-csrf-token"),
            ] + crossSite)
    }

    // MARK: - Attacks

    @Test(arguments: [
        "/api/related-origins/csrf", "/api/passkeys/authentication/start",
        "/api/passkeys/authentication/finish",
    ])
    func anOriginNotInTheListGetsNoCORSHeaders(path: String) throws {
        let app = try Self.app()
        let preflight = try Self.preflight(app, Self.evil, path: path)
        #expect(preflight.header("Access-Control-Allow-Origin") == nil)
        #expect(preflight.header("Access-Control-Allow-Credentials") == nil)
        #expect(preflight.header("Access-Control-Allow-Methods") == nil)
        #expect(preflight.header("Vary") == "Origin")
        let listed = try Self.preflight(app, Self.shop, path: path)
        #expect(listed.status == 204)
        #expect(listed.header("Access-Control-Allow-Origin") == Self.shop)
        #expect(listed.header("Access-Control-Allow-Credentials") == "true")
        #expect(listed.header("Access-Control-Allow-Methods")?.contains("POST") == true)
        #expect(listed.header("Access-Control-Allow-Headers")?.contains("X-CSRF-Token") == true)
        #expect(listed.header("Vary") == "Origin")
    }

    @Test func anOriginNotInTheListIsRefusedATokenAndItsPostIsRefused() throws {
        let app = try Self.app()
        let evil = Self.agent(app, Self.evil)
        let issued = try Self.token(evil, origin: Self.evil)
        #expect(issued.status == 403)
        #expect(issued.error == "csrf_failed")
        #expect(issued.header("Access-Control-Allow-Origin") == nil)
        // Even with a token issued to a listed origin (obtained outside a browser).
        evil.csrfToken = try #require(
            Self.token(Self.agent(app, Self.shop), origin: Self.shop).json["csrf_token"] as? String)
        let start = try evil.send(
            "POST", "/api/passkeys/authentication/start", json: [:], headers: Self.crossSite)
        #expect(start.status == 403)
        #expect(start.error == "csrf_failed")
        #expect(start.header("Access-Control-Allow-Origin") == nil)
        #expect(try app.sql("SELECT 1 AS n FROM passkey_authentication_challenges").isEmpty)
    }

    @Test func aListedOriginWithoutATokenOrWithAnotherOriginsTokenIsRefused() throws {
        let app = try Self.app()
        let shop = Self.agent(app, Self.shop)
        let none = try shop.send(
            "POST", "/api/passkeys/authentication/start", json: [:], headers: Self.crossSite)
        #expect(none.status == 403)
        #expect(none.error == "csrf_failed")
        // The refusal is readable by the listed origin (CORS headers on errors too).
        #expect(none.header("Access-Control-Allow-Origin") == Self.shop)

        shop.csrfToken = "A" + String(repeating: "b", count: 42)
        let forged = try shop.send(
            "POST", "/api/passkeys/authentication/start", json: [:], headers: Self.crossSite)
        #expect(forged.error == "csrf_failed")

        shop.csrfToken = try #require(
            Self.token(Self.agent(app, Self.outlet), origin: Self.outlet).json["csrf_token"] as? String)
        let borrowed = try shop.send(
            "POST", "/api/passkeys/authentication/start", json: [:], headers: Self.crossSite)
        #expect(borrowed.error == "csrf_failed")

        let token = try #require(Self.token(shop, origin: Self.shop).json["csrf_token"] as? String)
        try app.sql("UPDATE related_origin_csrf_tokens SET expires_at = now() - interval '1 second'")
        shop.csrfToken = token
        let expired = try shop.send(
            "POST", "/api/passkeys/authentication/start", json: [:], headers: Self.crossSite)
        #expect(expired.error == "csrf_failed")
        #expect(try app.sql("SELECT 1 AS n FROM passkey_authentication_challenges").isEmpty)
    }

    @Test func theIssuersOwnPagesStillUseTheCookieAndRelatedTokensDoNotReplaceIt() throws {
        let app = try Self.app()
        let page = TestAgent(app)
        #expect(try page.post("/api/passkeys/authentication/start").status == 200)
        // A related-origin token is no CSRF token for the issuer's own origin.
        let stranger = TestAgent(app)
        stranger.csrfToken = try #require(
            Self.token(Self.agent(app, Self.shop), origin: Self.shop).json["csrf_token"] as? String)
        #expect(
            try stranger.send("POST", "/api/passkeys/authentication/start", json: [:]).error == "csrf_failed")
    }

    @Test func tokensAreStoredAsDigests() throws {
        let app = try Self.app()
        let token = try #require(
            Self.token(Self.agent(app, Self.shop), origin: Self.shop).json["csrf_token"] as? String)
        let rows = try app.sql("SELECT token_digest, origin FROM related_origin_csrf_tokens")
        #expect(rows.count == 1)
        #expect(try rows.first?.decode("token_digest", as: [UInt8].self) == RelatedOriginCSRF.digest(token))
        #expect(try rows.first?.decode("origin", as: String.self) == Self.shop)
    }

    /// Issuing a token writes one row; the maintenance pass, not the next issuance, removes
    /// the expired ones.
    @Test func expiredTokensAreRemovedByTheMaintenancePass() throws {
        let app = try Self.app()
        let shop = Self.agent(app, Self.shop)
        #expect(try Self.token(shop, origin: Self.shop).status == 200)
        try app.sql("UPDATE related_origin_csrf_tokens SET expires_at = now() - interval '1 second'")
        #expect(try Self.token(shop, origin: Self.shop).status == 200)
        #expect(try app.count("SELECT count(*) FROM related_origin_csrf_tokens") == 2)
        let removed = try #require(
            try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365))
        #expect(removed.contains(Maintenance.Removed(table: "related_origin_csrf_tokens", rows: 1)))
        #expect(try app.count("SELECT count(*) FROM related_origin_csrf_tokens WHERE expires_at > now()") == 1)
        #expect(try app.count("SELECT count(*) FROM related_origin_csrf_tokens") == 1)
    }

    // MARK: - The ceremony

    @Test func aListedOriginSignsInWithAPasskey() throws {
        let app = try Self.app()
        let (owner, handle) = try PasskeyFlowTests.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try owner.registerPasskey(authenticator).status == 201)

        let shop = Self.agent(app, Self.shop)
        let issued = try Self.token(shop, origin: Self.shop)
        #expect(issued.status == 200)
        #expect(issued.header("Access-Control-Allow-Origin") == Self.shop)
        #expect(issued.header("Access-Control-Allow-Credentials") == "true")
        #expect(issued.header("Cache-Control") == "no-store")
        shop.csrfToken = try #require(issued.json["csrf_token"] as? String)

        let start = try shop.send(
            "POST", "/api/passkeys/authentication/start", json: [:], headers: Self.crossSite)
        #expect(start.status == 200)
        #expect(start.header("Access-Control-Allow-Origin") == Self.shop)
        let options = try start.decode(PublicKeyCredentialRequestOptionsJSON.self, at: "options")
        #expect(options.rpId == "localhost")
        let assertion = try authenticator.makeAssertion(
            challenge: try Base64URL.decode(options.challenge), origin: Self.shop, rpID: "localhost"
        ).userHandle(handle).json()
        let finish = try shop.send(
            "POST", "/api/passkeys/authentication/finish",
            json: try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(
                    AuthenticationFinish(
                        challengeID: try #require(start.json["challenge_id"] as? String),
                        credential: assertion))),
            headers: Self.crossSite)
        #expect(finish.status == 200)
        #expect(finish.header("Access-Control-Allow-Origin") == Self.shop)
        #expect(finish.json["signals"] is [String: Any])
    }

    /// `clientDataJSON.origin` is checked by the verifier: a related origin is accepted only
    /// while it is configured (the request itself comes from the issuer's page here).
    @Test(arguments: [true, false])
    func theCeremonyOriginIsAcceptedOnlyWhenConfigured(configured: Bool) throws {
        let app = try TestApplication { configuration in
            if configured { configuration.webAuthn.relatedOrigins = [Self.shop] }
        }
        let (owner, handle) = try PasskeyFlowTests.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try owner.registerPasskey(authenticator).status == 201)
        let page = TestAgent(app)
        let start = try page.post("/api/passkeys/authentication/start")
        let options = try start.decode(PublicKeyCredentialRequestOptionsJSON.self, at: "options")
        let assertion = try authenticator.makeAssertion(
            challenge: try Base64URL.decode(options.challenge), origin: Self.shop, rpID: "localhost"
        ).userHandle(handle).json()
        let finish = try page.postEncodable(
            "/api/passkeys/authentication/finish",
            AuthenticationFinish(
                challengeID: try #require(start.json["challenge_id"] as? String), credential: assertion))
        if configured {
            #expect(finish.status == 200)
        } else {
            #expect(finish.status == 400)
            #expect(finish.error == "passkey_verification_failed")
        }
    }
}
