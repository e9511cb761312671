import Crypto
import Foundation
import Testing
@testable import OIDC

@Suite struct SignedIntrospectionTests {
    @Test(arguments: [
        ("application/token-introspection+jwt", true),
        ("application/json, application/token-introspection+jwt;q=0.9", true),
        ("Application/Token-Introspection+JWT", true), ("application/json", false), (nil, false),
        ("application/token-introspection+jwt-extra", false),
    ])
    func acceptChoosesTheSignedAnswer(accept: String?, wanted: Bool) {
        #expect(IntrospectionResponse.wantsJWT(accept: accept) == wanted)
    }

    @Test func theSignedAnswerCarriesTheRFC7662AnswerForItsCaller() throws {
        let signer = try JWSSigner(privateKey: Vectors.rsaJWK.privateKey(), algorithm: .RS256, keyID: "k1")
        let verifier = JWSVerifier(
            keys: JWKS(keys: [try JWK(publicKey: try Vectors.rsaJWK.privateKey().publicKey, keyID: "k1")]),
            allowedAlgorithms: [.RS256])
        var token = IntrospectionResponse.ActiveToken(
            scope: ["orders:read"], clientID: "web-app", tokenType: "Bearer", expiresAt: Fixture.now,
            issuedAt: Fixture.now, subject: "u", audience: ["https://api.example.com/orders"],
            issuer: Fixture.issuer, jwtID: "j")
        token.extraClaims = ["roles": .array([.string("admin")])]
        let jwt = try IntrospectionResponse.active(token).signed(
            issuer: Fixture.issuer, audience: "orders-api", issuedAt: Fixture.now, signer: signer)
        let verified = try verifier.verify(jwt, expectedType: "token-introspection+jwt")
        let claims = try verified.decodePayload(as: [String: JSONValue].self)
        #expect(claims["iss"] == .string(Fixture.issuer))
        #expect(claims["aud"] == .string("orders-api"))
        #expect(claims["iat"] == .int(Int(Fixture.now.timeIntervalSince1970)))
        let inner = try #require(claims["token_introspection"]?.objectValue)
        #expect(inner["active"] == .bool(true) && inner["roles"] == .array([.string("admin")]))

        let inactive = try IntrospectionResponse.inactive.signed(
            issuer: Fixture.issuer, audience: "orders-api", issuedAt: Fixture.now, signer: signer)
        let body = try verifier.verify(inactive, expectedType: "token-introspection+jwt")
            .decodePayload(as: [String: JSONValue].self)
        #expect(body["token_introspection"] == .object(["active": .bool(false)]))
    }
}
