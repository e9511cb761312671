import Crypto
import Foundation
import OIDC
import Testing

@testable import AuthServer

/// A client_credentials JWT has no record until its client revokes it: it concerns no account,
/// session or refresh-token family, so nothing but its client's revocation can end it before
/// its `exp`. Revocation writes the record that refuses it. These are the attacker's requests
/// against that rule, over HTTP against PostgreSQL.
@Suite struct ClientAccessTokenTests {
    static let orders = ResourceFlowTests.orders
    static let ordersAPI = OAuthFixtures.basic("orders-api", ResourceFlowTests.ordersSecret)

    func introspect(_ app: TestApplication, _ token: String, as auth: (String, String) = OAuthFixtures.basic())
        throws -> [String: Any]
    {
        try TestAgent.Reply(
            response: app.client.post("/introspect", form: [("token", token)], headers: [auth])
        ).json
    }

    func revoke(
        _ app: TestApplication, _ token: String, as auth: (String, String)? = OAuthFixtures.basic(),
        extra: [(String, String)] = []
    ) throws -> TestAgent.Reply {
        try TestAgent.Reply(
            response: app.client.post("/revoke", form: [("token", token)] + extra, headers: auth.map { [$0] } ?? []))
    }

    func grant(_ app: TestApplication, scope: String) throws -> String {
        let reply = try app.token([("grant_type", "client_credentials"), ("scope", scope)])
        #expect(reply.status == 200, "\(reply.text)")
        return try #require(reply.json["access_token"] as? String)
    }

    @Test func aGrantWritesNothingAndItsTokenSaysWhatItIs() throws {
        let app = try ResourceFlowTests.app()
        let token = try grant(app, scope: "orders:read")
        #expect(try app.sql("SELECT jti FROM access_tokens").isEmpty)
        let claims = try app.claims(of: token, type: "at+jwt")
        #expect(claims["gty"] == .string("client_credentials"))
        #expect(claims["sub"] == .string("web-app"))
        // Live for its client and for its API, with nothing written.
        #expect(try introspect(app, token)["active"] as? Bool == true)
        let forAPI = try introspect(app, token, as: Self.ordersAPI)
        #expect(forAPI["active"] as? Bool == true)
        #expect(forAPI["aud"] as? String == Self.orders)
        #expect(forAPI["sub"] as? String == "web-app")
    }

    @Test func revocationByItsClientEndsItForEveryone() throws {
        let app = try ResourceFlowTests.app()
        let token = try grant(app, scope: "orders:read")
        let jti = try #require(try app.claims(of: token)["jti"]?.stringValue)
        let exp = try #require(try app.claims(of: token)["exp"]?.intValue)
        // Attack: another client revokes it (RFC 7009 §2.1): 200, and nothing changes.
        let foreign = try revoke(
            app, token, as: nil, extra: [("client_id", "post-app"), ("client_secret", OAuthFixtures.webSecret)])
        #expect(foreign.status == 200)
        #expect(try app.sql("SELECT jti FROM access_tokens").isEmpty)
        #expect(try introspect(app, token, as: Self.ordersAPI)["active"] as? Bool == true)
        // Its client revokes it: a record, refused by every reader, kept until the token expires.
        #expect(try revoke(app, token).status == 200)
        #expect(try introspect(app, token) as NSDictionary == ["active": false])
        #expect(try introspect(app, token, as: Self.ordersAPI) as NSDictionary == ["active": false])
        let rows = try app.sql(
            """
            SELECT client_id, audience, scopes, extract(epoch FROM expires_at)::bigint AS exp,
                   revoked_at IS NOT NULL AS revoked
            FROM access_tokens WHERE jti = \(jti)
            """)
        let row = try #require(rows.first)
        #expect(try row.decode("client_id", as: String.self) == "web-app")
        #expect(try row.decode("audience", as: String.self) == Self.orders)
        #expect(try row.decode("scopes", as: [String].self) == ["orders:read"])
        #expect(try row.decode("exp", as: Int.self) == exp)
        #expect(try row.decode("revoked", as: Bool.self))
        // Revoking again changes nothing and answers as before.
        #expect(try revoke(app, token).status == 200)
        #expect(try app.sql("SELECT jti FROM access_tokens").count == 1)
        #expect(try introspect(app, token) as NSDictionary == ["active": false])
    }

    /// The rule is read from the signed token, so it cannot be claimed: a user's token whose
    /// record is gone (its account deleted, say) stays refused, and a token edited to claim
    /// the rule no longer verifies.
    @Test func onlyATokenSignedAsAClientsOwnLivesWithoutARecord() throws {
        let app = try OAuthFixtures.app()
        let (_, tokens) = try app.signedInFlow()
        #expect(try introspect(app, tokens.accessToken)["active"] as? Bool == true)
        _ = try app.sql("DELETE FROM access_tokens")
        #expect(try introspect(app, tokens.accessToken) as NSDictionary == ["active": false])
        #expect(try app.userinfo(tokens.accessToken).status == 401)

        // Attack: the user's token with `gty` added to its payload, signature unchanged.
        let parts = tokens.accessToken.split(separator: ".").map(String.init)
        var payload = try app.claims(of: tokens.accessToken)
        payload["gty"] = .string("client_credentials")
        let edited = [parts[0], Base64URL.encode(JSONBody.encode(payload)), parts[2]].joined(separator: ".")
        #expect(try introspect(app, edited) as NSDictionary == ["active": false])
        #expect(try app.userinfo(edited).status == 401)
    }

    /// A revoked token's record is purged by PostgreSQL's clock an hour after the token's `exp`.
    /// Were its `exp` read by the server's clock alone, a server running more than an hour
    /// behind its database would find neither the record nor the expiry, and the revoked token
    /// would live again. Its `exp` is checked by both clocks, as a user's token's record is.
    @Test func aRevokedTokenStaysRefusedAfterItsRecordIsPurgedWhateverTheServersClock() throws {
        let behind = TimeAndRandomness(
            now: { Date().addingTimeInterval(-3 * 3_600) }, randomBytes: TimeAndRandomness.live.randomBytes)
        let app = try OAuthFixtures.app(system: behind)
        // Lives 300 s by the server's clock, so it expired 2 h 55 min ago by the database's.
        let token = try grant(app, scope: "api.read")
        #expect(try revoke(app, token).status == 200)
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        #expect(try app.sql("SELECT jti FROM access_tokens").isEmpty)
        // Attack: the revoked token, presented after its record is gone.
        #expect(try introspect(app, token) as NSDictionary == ["active": false])
        #expect(try app.userinfo(token).status == 401)
    }

    /// Instances behind one load balancer do not share a clock. A revocation that reaches one
    /// whose clock finds the token already expired must still write its record: another
    /// instance, whose clock runs behind, finds the token unexpired, and so does PostgreSQL.
    @Test func aRevocationWritesItsRecordWhicheverClockFindsTheTokenExpired() throws {
        let clock = TestClock(Date())
        let app = try OAuthFixtures.app(
            system: TimeAndRandomness(now: { clock.now }, randomBytes: TimeAndRandomness.live.randomBytes))
        let token = try grant(app, scope: "api.read")  // lives 300 s
        // The instance that answers /revoke runs 400 s ahead.
        clock.advance(400)
        #expect(try revoke(app, token).status == 200)
        // Attack: the revoked token, presented to an instance whose clock is right.
        clock.advance(-400)
        #expect(try introspect(app, token) as NSDictionary == ["active": false])
        #expect(try app.userinfo(token).status == 401)
    }

    /// A client's own token has no user: /userinfo refuses it for its scope, record or not.
    @Test func userinfoRefusesAClientsOwnTokenForItsScope() throws {
        let app = try OAuthFixtures.app()
        let token = try grant(app, scope: "api.read")
        let reply = try app.userinfo(token)
        #expect(reply.status == 403)
        #expect(reply.header("WWW-Authenticate")?.contains("insufficient_scope") == true)
        #expect(try revoke(app, token).status == 200)
        #expect(try app.userinfo(token).status == 401)
    }
}
