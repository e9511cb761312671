import Crypto
import Foundation
import OIDC
import Testing

@testable import AuthServer

/// APIs as configured resources, end to end over HTTP against PostgreSQL: resource
/// indicators at /authorize and /token, per-API access tokens, opaque tokens, and
/// introspection by resource servers, with the attacker's requests and their refusals.
@Suite struct ResourceFlowTests {
    static let orders = "https://api.example.com/orders"
    static let billing = "urn:example:billing"
    static let ordersSecret = "orders-api-secret-with-plenty-of-entropy-0123456789"
    static let billingSecret = "billing-api-secret-with-plenty-of-entropy-0123456789"

    static func app() throws -> TestApplication {
        try OAuthFixtures.app { configuration in
            configuration.resources = [
                ProtectedResource(
                    identifier: orders, name: "Orders",
                    scopes: [.init(name: "orders:read", description: "Read orders", descriptionJa: "注文の閲覧")],
                    tokenLifetimeSeconds: 300, allowedClients: ["web-app"], tokenClaims: [.roles],
                    introspection: .init(
                        clientID: "orders-api", clientSecretHash: ClientSecret.hash(ordersSecret))),
                ProtectedResource(
                    identifier: billing, name: "Billing",
                    scopes: [.init(name: "billing:read", description: "Invoices", descriptionJa: "請求書")],
                    tokenFormat: .opaque, tokenLifetimeSeconds: 120, allowedClients: ["web-app"],
                    introspection: .init(
                        clientID: "billing-api", clientSecretHash: ClientSecret.hash(billingSecret))),
            ]
        }
    }

    static func attempt(_ scope: String, resources: [String] = []) -> AuthorizationAttempt {
        var attempt = AuthorizationAttempt()
        attempt.scope = scope
        attempt.extra = resources.map { ("resource", $0) }
        return attempt
    }

    func introspect(_ app: TestApplication, _ token: String, as api: (String, String)) throws -> [String: Any]
    {
        try TestAgent.Reply(
            response: app.client.post(
                "/introspect", form: [("token", token)], headers: [OAuthFixtures.basic(api.0, api.1)])
        ).json
    }

    @Test func anAPIsTokenHasItsAudienceScopesLifetimeAndRoles() throws {
        let app = try Self.app()
        let agent = TestAgent(app)
        _ = try agent.signUp(email: TestAgent.uniqueEmail())
        // The role is assigned before the flow, as an operator would.
        let (_, plain) = try app.signedInFlow(Self.attempt("openid"), agent: agent)
        let subject = try #require(try app.claims(of: plain.accessToken)["sub"]?.stringValue)
        try AccountStore.addAttribute(
            .role, name: "orders-admin", accountID: try #require(UUID(uuidString: subject)),
            on: app.database.pool)

        let (_, tokens) = try app.signedInFlow(
            Self.attempt("openid orders:read offline_access"), agent: agent)
        let claims = try app.claims(of: tokens.accessToken, type: "at+jwt")
        #expect(claims["aud"] == .string(Self.orders))
        #expect(claims["scope"] == .string("orders:read"))
        #expect(claims["roles"] == .array([.string("orders-admin")]))
        #expect(claims["groups"] == nil)
        #expect(
            (claims["exp"]?.intValue ?? 0) - (claims["iat"]?.intValue ?? 0) == 300)
        // Not a token for userinfo.
        #expect(try app.userinfo(tokens.accessToken).status == 401)
        // The ID token is the client's as before.
        #expect(try app.claims(of: try #require(tokens.idToken))["aud"] == .string("web-app"))
    }

    @Test func aResourceServerSeesOnlyItsOwnAPIsTokens() throws {
        let app = try Self.app()
        let (_, tokens) = try app.signedInFlow(Self.attempt("openid orders:read offline_access"))
        let orders = ("orders-api", Self.ordersSecret)
        let billing = ("billing-api", Self.billingSecret)
        let active = try introspect(app, tokens.accessToken, as: orders)
        #expect(active["active"] as? Bool == true)
        #expect(active["aud"] as? String == Self.orders)
        #expect(active["client_id"] as? String == "web-app")
        #expect(active["roles"] as? [String] == [])
        // Attack: another API asks about the orders API's token.
        #expect(try introspect(app, tokens.accessToken, as: billing) as NSDictionary == ["active": false])
        // Attack: an API asks about a refresh token.
        #expect(
            try introspect(app, try #require(tokens.refreshToken), as: orders) as NSDictionary == [
                "active": false
            ])
        // Attack: a token for this server's own endpoints.
        let (_, plain) = try app.signedInFlow(Self.attempt("openid"))
        #expect(try introspect(app, plain.accessToken, as: orders) as NSDictionary == ["active": false])
        // Attack: a wrong secret.
        let wrong = try TestAgent.Reply(
            response: app.client.post(
                "/introspect", form: [("token", tokens.accessToken)],
                headers: [OAuthFixtures.basic("orders-api", Self.billingSecret)]))
        #expect(wrong.status == 401 && wrong.error == "invalid_client")
        // The client keeps its rule: its own tokens, whatever their audience.
        let own = try TestAgent.Reply(
            response: app.client.post(
                "/introspect", form: [("token", tokens.accessToken)], headers: [OAuthFixtures.basic()]))
        #expect(own.json["active"] as? Bool == true)
    }

    @Test func unknownOrUnallowedResourcesAreRefusedAtAuthorize() throws {
        let app = try Self.app()
        let agent = TestAgent(app)
        _ = try agent.signUp(email: TestAgent.uniqueEmail())
        let unknown = try agent.authorize(Self.attempt("openid", resources: ["https://evil.example.com/"]))
        #expect(unknown["error"] == "invalid_target")
        let fragment = try agent.authorize(Self.attempt("openid", resources: [Self.orders + "#x"]))
        #expect(fragment["error"] == "invalid_target")
        var native = Self.attempt("openid orders:read")
        native.clientID = "native-app"
        native.redirectURI = OAuthFixtures.nativeRedirect
        #expect(try agent.authorize(native)["error"] == "invalid_scope")
    }

    @Test func tokenRequestsOutsideTheGrantAreInvalidTarget() throws {
        let app = try Self.app()
        let agent = TestAgent(app)
        _ = try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = Self.attempt("openid orders:read offline_access")
        let code = try #require(try agent.authorize(attempt)["code"])
        // Attack: the code for the orders API redeemed for the billing API.
        let refused = try app.token([
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI),
            ("code_verifier", attempt.verifier), ("resource", Self.billing),
        ])
        #expect(refused.status == 400 && refused.error == "invalid_target")

        let (_, tokens) = try app.signedInFlow(
            Self.attempt("openid orders:read offline_access"), agent: agent)
        let refresh = try #require(tokens.refreshToken)
        let outside = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("resource", Self.billing),
        ])
        #expect(outside.status == 400 && outside.error == "invalid_target")
        // The refused request did not rotate the refresh token.
        let again = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", refresh), ("resource", Self.orders),
        ])
        #expect(again.status == 200)
    }

    @Test func opaqueTokensAreStoredAsDigestsAndRevocableOnlyByTheirClient() throws {
        let app = try Self.app()
        let issued = try app.token([
            ("grant_type", "client_credentials"), ("scope", "billing:read"),
        ])
        #expect(issued.status == 200, "\(issued.text)")
        let token = try #require(issued.json["access_token"] as? String)
        let raw = try Base64URL.decode(token)
        #expect(!token.contains(".") && raw.count == 32)
        let rows = try app.sql(
            "SELECT token_digest, audience FROM access_tokens WHERE token_digest IS NOT NULL")
        let row = try #require(rows.first)
        #expect(
            try row.decode("token_digest", as: [UInt8].self) == SHA256.hash(data: Array(token.utf8)).bytes)
        #expect(try row.decode("audience", as: String.self) == Self.billing)

        let billing = ("billing-api", Self.billingSecret)
        #expect(try introspect(app, token, as: billing)["active"] as? Bool == true)
        // Attack: another client revokes it (RFC 7009 §2.1: only the client it was issued to).
        _ = try app.client.post(
            "/revoke", form: [("token", token)],
            headers: [OAuthFixtures.basic("post-app", OAuthFixtures.webSecret)])
        _ = try app.client.post(
            "/revoke",
            form: [("token", token), ("client_id", "post-app"), ("client_secret", OAuthFixtures.webSecret)])
        #expect(try introspect(app, token, as: billing)["active"] as? Bool == true)
        // Its client revokes it.
        _ = try app.client.post("/revoke", form: [("token", token)], headers: [OAuthFixtures.basic()])
        #expect(try introspect(app, token, as: billing) as NSDictionary == ["active": false])
    }
}
