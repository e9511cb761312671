import Crypto
import Foundation
import Testing
@testable import OIDC

@Suite struct TokenClaimsTests {
    static let signer = try! JWSSigner(privateKey: Vectors.ecJWK.privateKey(), algorithm: .ES256, keyID: "k1")
    static let verifier = JWSVerifier(
        keys: JWKS(keys: [try! JWK(publicKey: signer.privateKey.publicKey, keyID: "k1")]),
        allowedAlgorithms: [.ES256])

    // OpenID Connect Core 1.0 Appendix A.3: access token and its at_hash (RS256, SHA-256).
    @Test func atHashCoreA3() {
        #expect(
            IDTokenClaims.accessTokenHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", algorithm: .RS256)
                == "77QmUPtjPfzWtF2AnpK9RQ")
        #expect(
            IDTokenClaims.accessTokenHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", algorithm: .ES256)
                == "77QmUPtjPfzWtF2AnpK9RQ")
        #expect(
            IDTokenClaims.accessTokenHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", algorithm: .PS256)
                == "77QmUPtjPfzWtF2AnpK9RQ")
        // Ed25519: left half of SHA-512 (computed independently with Python hashlib).
        #expect(
            IDTokenClaims.accessTokenHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", algorithm: .EdDSA)
                == "q7nS86GgvvFaZkzALLWqJYaJIKw2wCDAVfCAsm5CrBM")
    }

    @Test func idToken() throws {
        let available: [String: JSONValue] = [
            "email": .string("alice@example.com"), "email_verified": .bool(true), "name": .string("Alice"),
            "phone_number": .string("+1"), "sub": .string("attacker"),
        ]
        let claims = IDTokenClaims(
            issuer: Fixture.issuer, subject: "acct-1", audience: "native-app",
            expiresAt: Fixture.now.addingTimeInterval(300),
            issuedAt: Fixture.now, authTime: Fixture.now.addingTimeInterval(-30), nonce: "n-0S6_WzA2Mj",
            acr: nil,
            amr: AuthenticationMethods.password, sessionID: "sid-1",
            accessTokenHash: IDTokenClaims.accessTokenHash("at", algorithm: .ES256),
            userClaims: IDTokenClaims.selecting(["email", "phone_number", "sub"], from: available))
        let token = try claims.sign(with: Self.signer)
        let verified = try Self.verifier.verify(token, expectedType: "JWT")
        #expect(verified.header.keyID == "k1")
        let payload = try verified.decodePayload(as: [String: JSONValue].self)
        let now = Int(Fixture.now.timeIntervalSince1970)
        #expect(
            payload == [
                "iss": .string(Fixture.issuer), "sub": .string("acct-1"), "aud": .string("native-app"),
                "azp": .string("native-app"),
                "exp": .int(now + 300), "iat": .int(now), "auth_time": .int(now - 30),
                "nonce": .string("n-0S6_WzA2Mj"),
                "amr": .array([.string("pwd")]), "sid": .string("sid-1"),
                "at_hash": .string(IDTokenClaims.accessTokenHash("at", algorithm: .ES256)),
                "email": .string("alice@example.com"),
            ])
        _ = try JWTClaimsValidator(issuer: Fixture.issuer, audience: "native-app").validate(
            verified.payload, now: Fixture.now)
    }

    @Test func idTokenWithoutOptionalClaims() throws {
        let claims = IDTokenClaims(
            issuer: Fixture.issuer, subject: "s", audience: "c", expiresAt: Fixture.now,
            issuedAt: Fixture.now,
            authTime: Fixture.now, nonce: nil, amr: [], sessionID: nil, accessTokenHash: nil)
        #expect(Set(claims.json.keys) == ["iss", "sub", "aud", "azp", "exp", "iat", "auth_time"])
    }

    @Test func accessToken() throws {
        let claims = AccessTokenClaims(
            issuer: Fixture.issuer, audience: Fixture.issuer, subject: "acct-1", clientID: "native-app",
            expiresAt: Fixture.now.addingTimeInterval(600), issuedAt: Fixture.now, jwtID: "jti-1",
            scope: ["openid", "email"], authTime: Fixture.now.addingTimeInterval(-5), acr: "urn:example:acr",
            amr: ["hwk", "user"])
        let token = try claims.sign(with: Self.signer)
        let verified = try Self.verifier.verify(token)
        #expect(verified.header.type == "at+jwt")
        let now = Int(Fixture.now.timeIntervalSince1970)
        #expect(
            try verified.decodePayload(as: [String: JSONValue].self) == [
                "iss": .string(Fixture.issuer), "aud": .string(Fixture.issuer), "sub": .string("acct-1"),
                "client_id": .string("native-app"), "exp": .int(now + 600), "iat": .int(now),
                "jti": .string("jti-1"),
                "scope": .string("openid email"), "auth_time": .int(now - 5),
                "acr": .string("urn:example:acr"),
                "amr": .array([.string("hwk"), .string("user")]),
            ])
        let parsed = try AccessTokenClaims.verify(
            token, verifier: Self.verifier, issuer: Fixture.issuer, audience: Fixture.issuer, now: Fixture.now
        )
        #expect(parsed == claims)
        #expect(throws: JOSEError.expired) {
            try AccessTokenClaims.verify(
                token, verifier: Self.verifier, issuer: Fixture.issuer, audience: Fixture.issuer,
                now: Fixture.now.addingTimeInterval(700))
        }
        #expect(throws: JOSEError.audienceMismatch) {
            try AccessTokenClaims.verify(
                token, verifier: Self.verifier, issuer: Fixture.issuer, audience: "https://other",
                now: Fixture.now)
        }
        // An ID token is not accepted as an access token (typ).
        let idToken = try IDTokenClaims(
            issuer: Fixture.issuer, subject: "s", audience: Fixture.issuer,
            expiresAt: Fixture.now.addingTimeInterval(60),
            issuedAt: Fixture.now, authTime: Fixture.now, nonce: nil, amr: [], sessionID: nil,
            accessTokenHash: nil
        ).sign(with: Self.signer)
        #expect(throws: JOSEError.typeMismatch) {
            try AccessTokenClaims.verify(
                idToken, verifier: Self.verifier, issuer: Fixture.issuer, audience: Fixture.issuer,
                now: Fixture.now)
        }
        // A JWS verified already gets the same checks, its `typ` among them.
        #expect(
            try AccessTokenClaims.validate(
                verified, issuer: Fixture.issuer, audiences: [Fixture.issuer], now: Fixture.now) == claims)
        #expect(throws: JOSEError.typeMismatch) {
            try AccessTokenClaims.validate(
                Self.verifier.verify(idToken), issuer: Fixture.issuer, audiences: [Fixture.issuer],
                now: Fixture.now)
        }
        #expect(throws: JOSEError.expired) {
            try AccessTokenClaims.validate(
                verified, issuer: Fixture.issuer, audiences: [Fixture.issuer],
                now: Fixture.now.addingTimeInterval(700))
        }
    }

    /// `gty` is what lets a client_credentials token live without a record, so only
    /// `grantType` writes it: an extra claim of that name (an API's claim, an attribute) is
    /// dropped from a user's token rather than signed into it.
    @Test func grantTypeIsWrittenOnlyByItsOwnField() throws {
        var claims = AccessTokenClaims(
            issuer: Fixture.issuer, audience: Fixture.issuer, subject: "acct-1", clientID: "native-app",
            expiresAt: Fixture.now.addingTimeInterval(600), issuedAt: Fixture.now, jwtID: "jti-1",
            scope: ["openid"], authTime: nil)
        claims.extraClaims["gty"] = .string(AccessTokenClaims.clientCredentials)
        #expect(claims.json["gty"] == nil)
        let parsed = try AccessTokenClaims.verify(
            claims.sign(with: Self.signer), verifier: Self.verifier, issuer: Fixture.issuer,
            audience: Fixture.issuer, now: Fixture.now)
        #expect(!parsed.isClientCredentials)
        claims.grantType = AccessTokenClaims.clientCredentials
        #expect(claims.json["gty"] == .string("client_credentials"))
    }

    @Test func logoutToken() throws {
        let token = LogoutToken(
            issuer: Fixture.issuer, audience: "web-app", issuedAt: Fixture.now,
            expiresAt: Fixture.now.addingTimeInterval(120),
            jwtID: "j1", subject: "acct-1", sessionID: "sid-1")
        let verified = try Self.verifier.verify(try token.sign(with: Self.signer), expectedType: "logout+jwt")
        let payload = try verified.decodePayload(as: [String: JSONValue].self)
        let now = Int(Fixture.now.timeIntervalSince1970)
        #expect(
            payload == [
                "iss": .string(Fixture.issuer), "aud": .string("web-app"), "iat": .int(now),
                "exp": .int(now + 120),
                "jti": .string("j1"), "sub": .string("acct-1"), "sid": .string("sid-1"),
                "events": .object(["http://schemas.openid.net/event/backchannel-logout": .object([:])]),
            ])
        #expect(payload["nonce"] == nil)
        var anonymous = token
        anonymous.subject = nil
        anonymous.sessionID = nil
        #expect(throws: JOSEError.missingClaim("sub or sid")) { try anonymous.sign(with: Self.signer) }
    }
}
