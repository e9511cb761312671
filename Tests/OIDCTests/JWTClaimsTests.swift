import Foundation
import Testing
@testable import OIDC

@Suite struct JWTClaimsTests {
    let validator = JWTClaimsValidator(issuer: "https://id.example.com", audience: "client-1")
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func payload(_ json: String) -> [UInt8] { Array(json.utf8) }

    @Test func validClaims() throws {
        let claims = try validator.validate(
            payload(#"{"iss":"https://id.example.com","aud":"client-1","sub":"u1","exp":1700000300,"iat":1700000000,"nbf":1699999990,"jti":"j"}"#),
            now: now)
        #expect(claims.subject == "u1" && claims.audience == ["client-1"] && claims.jwtID == "j")
        #expect(claims.expiresAt == Date(timeIntervalSince1970: 1_700_000_300))
        let array = try validator.validate(
            payload(#"{"iss":"https://id.example.com","aud":["other","client-1"],"exp":1700000300.5}"#), now: now)
        #expect(array.audience == ["other", "client-1"])
    }

    // RFC 7515 Appendix A.2 payload: exp 1300819380 (2011-03-22).
    @Test func rfc7515PayloadExpiry() throws {
        let lenient = JWTClaimsValidator(issuer: "joe", audience: nil)
        let before = Date(timeIntervalSince1970: 1_300_819_000)
        #expect(try lenient.validate(Vectors.payload, now: before).issuer == "joe")
        #expect(throws: JOSEError.expired) { try lenient.validate(Vectors.payload, now: now) }
    }

    @Test func leewayBoundaries() throws {
        let body = payload(#"{"iss":"https://id.example.com","aud":"client-1","exp":1700000000}"#)
        #expect(try validator.validate(body, now: now.addingTimeInterval(59)).issuer != nil)
        #expect(throws: JOSEError.expired) { try validator.validate(body, now: now.addingTimeInterval(60)) }
    }

    @Test func failures() {
        let cases: [(String, JOSEError)] = [
            (#"{"iss":"https://id.example.com","aud":"client-1","exp":1699999000}"#, .expired),
            (#"{"iss":"https://id.example.com","aud":"client-1","exp":1700000300,"nbf":1700000100}"#, .notYetValid),
            (#"{"iss":"https://id.example.com","aud":"client-1","exp":1700000300,"iat":1700000100}"#, .issuedInFuture),
            (#"{"iss":"https://evil.example.com","aud":"client-1","exp":1700000300}"#, .issuerMismatch),
            (#"{"iss":"https://id.example.com/","aud":"client-1","exp":1700000300}"#, .issuerMismatch),
            (#"{"iss":"https://id.example.com","aud":"client-2","exp":1700000300}"#, .audienceMismatch),
            (#"{"iss":"https://id.example.com","aud":["a","b"],"exp":1700000300}"#, .audienceMismatch),
            (#"{"iss":"https://id.example.com","aud":"client-1"}"#, .missingClaim("exp")),
            (#"{"aud":"client-1","exp":1700000300}"#, .missingClaim("iss")),
            (#"{"iss":"https://id.example.com","exp":1700000300}"#, .missingClaim("aud")),
            (#"{"iss":"https://id.example.com","aud":"client-1","exp":"1700000300"}"#, .invalidClaim("exp")),
            (#"{"iss":"https://id.example.com","aud":"client-1","exp":true}"#, .invalidClaim("exp")),
            (#"{"iss":"https://id.example.com","aud":[1],"exp":1700000300}"#, .invalidClaim("aud")),
            (#"{"iss":7,"aud":"client-1","exp":1700000300}"#, .invalidClaim("iss")),
            (#"[1,2]"#, .malformed),
            (#"not json"#, .malformed),
        ]
        for (json, expected) in cases {
            #expect(throws: expected) { try validator.validate(payload(json), now: now) }
        }
    }

    @Test func expirationOptionalWhenConfigured() throws {
        let lenient = JWTClaimsValidator(issuer: nil, audience: nil, requireExpiration: false)
        #expect(try lenient.validate(payload(#"{"sub":"x"}"#), now: now).subject == "x")
    }
}
