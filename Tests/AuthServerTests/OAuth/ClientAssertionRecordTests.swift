import Crypto
import Foundation
import OIDC
import Testing

@testable import AuthServer

/// A `private_key_jwt` assertion authenticates once (RFC 7523 §3 item 7): its `jti`'s record
/// refuses it again, on any instance, for as long as any instance's check could accept it
/// (its `exp` plus the leeway of `ClientAuthentication.assertionLeeway`) and five minutes more,
/// read by PostgreSQL's clock, which the instances behind one load balancer do not share.
@Suite struct ClientAssertionRecordTests {
    struct Fixture {
        let app: TestApplication
        let clock: TestClock
        let signer: JWSSigner

        init() throws {
            let key = try P256.Signing.PrivateKey()
            let jwk = try JWK(privateKey: .p256(key), keyID: "k1", algorithm: .ES256)
            let jwks = String(decoding: try JSONEncoder().encode(JWKS(keys: [jwk.publicJWK])), as: UTF8.self)
            let clock = TestClock(Date())
            app = try OAuthFixtures.app(
                privateKeyJWKS: jwks,
                system: TimeAndRandomness(now: { clock.now }, randomBytes: TimeAndRandomness.live.randomBytes))
            self.clock = clock
            signer = try JWSSigner(privateKey: .p256(key), algorithm: .ES256, keyID: "k1")
        }

        func assertion(jti: String, expiresAt: Date) throws -> String {
            let exp = Int(expiresAt.timeIntervalSince1970)
            return try signer.sign(
                payload: Array(
                    #"{"iss":"jwt-app","sub":"jwt-app","aud":"\#(app.configuration.issuer)/token","jti":"\#(jti)","exp":\#(exp)}"#
                        .utf8))
        }

        func grant(_ assertion: String) throws -> TestAgent.Reply {
            try app.token(
                [
                    ("grant_type", "client_credentials"), ("scope", "api.read"),
                    ("client_assertion_type", ClientAuthentication.jwtBearerAssertionType),
                    ("client_assertion", assertion),
                ], auth: nil)
        }

        /// Moves the records back by `seconds`: as if PostgreSQL's clock had run that far on.
        func age(by seconds: Int) throws {
            try app.sql("UPDATE client_assertion_ids SET expires_at = expires_at - make_interval(secs => \(seconds))")
        }
    }

    @Test func anAssertionStaysRefusedWithinFiveMinutesOfItsLeeway() throws {
        let fixture = try Fixture()
        let exp = fixture.clock.now.addingTimeInterval(60)
        let assertion = try fixture.assertion(jti: UUID().uuidString, expiresAt: exp)
        let first = try fixture.grant(assertion)
        #expect(first.status == 200, "\(first.text)")
        // By PostgreSQL's clock, 290 s past the last moment a check accepts the assertion
        // (exp + 60 s); a purge runs, and another grant's authentication.
        try fixture.age(by: 60 + 60 + 290)
        _ = try Maintenance.runOnce(pool: fixture.app.database.pool, auditRetentionDays: 365)
        let other = try fixture.grant(try fixture.assertion(jti: UUID().uuidString, expiresAt: exp))
        #expect(other.status == 200, "\(other.text)")
        // Attack: the same assertion, replayed to an instance whose clock finds it within its
        // leeway (40 s past its exp).
        fixture.clock.advance(100)
        let replay = try fixture.grant(assertion)
        #expect(replay.status == 401, "\(replay.text)")
        #expect(replay.error == "invalid_client")
    }

    @Test func aJTIIsAcceptedAgainOnceItsRecordIsPastTheMargin() throws {
        let fixture = try Fixture()
        let jti = UUID().uuidString
        let exp = fixture.clock.now.addingTimeInterval(60)
        #expect(try fixture.grant(try fixture.assertion(jti: jti, expiresAt: exp)).status == 200)
        // The record 10 s past its margin, not yet purged: a new assertion with the same jti
        // (a client that reuses its ids long after they expired) authenticates, once.
        try fixture.age(by: 60 + 60 + 300 + 10)
        fixture.clock.advance(60 + 60 + 300 + 10)
        let reused = try fixture.assertion(jti: jti, expiresAt: fixture.clock.now.addingTimeInterval(60))
        let again = try fixture.grant(reused)
        #expect(again.status == 200, "\(again.text)")
        #expect(try fixture.grant(reused).status == 401)
    }
}
