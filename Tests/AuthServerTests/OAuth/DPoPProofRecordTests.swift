import Crypto
import Foundation
import OIDC
import Testing

@testable import AuthServer

/// A DPoP proof is accepted once (RFC 9449 §11.1): its record refuses it again, on any
/// instance, for as long as any instance could still find it fresh. Instances behind one load
/// balancer do not share a clock, and the record's expiry is read by PostgreSQL's.
@Suite struct DPoPProofRecordTests {
    /// A proof as a client makes it, for POST /token, issued at `iat`.
    static func proof(key: P256.Signing.PrivateKey, iat: Date) throws -> String {
        let header: [String: JSONValue] = [
            "typ": .string("dpop+jwt"), "alg": .string("ES256"),
            "jwk": .object(try JWK(publicKey: .p256(key.publicKey)).json.filter { $0.key != "use" }),
        ]
        let claims: [String: JSONValue] = [
            "jti": .string(UUID().uuidString), "htm": .string("POST"),
            "htu": .string("http://localhost:8080/token"), "iat": .int(Int(iat.timeIntervalSince1970)),
        ]
        let input = Base64URL.encode(JSONBody.encode(header)) + "." + Base64URL.encode(JSONBody.encode(claims))
        return input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8)).rawRepresentation)
    }

    @Test func aProofStaysRefusedOnAnInstanceWhoseClockRunsBehindAfterThePurge() throws {
        let start = Date()
        let clock = TestClock(start)
        let app = try OAuthFixtures.app(
            system: TimeAndRandomness(now: { clock.now }, randomBytes: TimeAndRandomness.live.randomBytes))
        // The client's clock runs 6 s ahead of PostgreSQL's.
        let proof = try Self.proof(key: P256.Signing.PrivateKey(), iat: start.addingTimeInterval(6))
        func grant() throws -> TestAgent.Reply {
            try TestAgent.Reply(
                response: app.client.post(
                    "/token", form: [("grant_type", "client_credentials"), ("scope", "api.read")],
                    headers: [OAuthFixtures.basic(), ("DPoP", proof)]))
        }
        // The instance that first sees it runs 2 s ahead: the proof is 4 s in its future, allowed.
        clock.advance(2)
        let first = try grant()
        #expect(first.status == 200, "\(first.text)")
        // 67 s later by PostgreSQL's clock, a purge runs.
        try app.sql("UPDATE dpop_proofs SET expires_at = expires_at - interval '67 seconds'")
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        // Attack: the same proof, replayed then to an instance 2 s behind: 59 s old there, fresh.
        clock.advance(63)
        let replay = try grant()
        #expect(replay.status == 400)
        #expect(replay.json["error"] as? String == "invalid_dpop_proof")
    }
}
