import Crypto
import Foundation
import Testing
@testable import OIDC

/// The bindings of RFC 9449: a code bound by `dpop_jkt` (§10), a refresh token bound to a
/// key (§5), an access token's `cnf.jkt` (§6.1), its introspection (§6.2) and `token_type`.
@Suite struct DPoPBindingTests {
    let jkt = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"

    @Test func unboundGrantsNeedNoProof() throws {
        try DPoPPolicy.checkBinding(boundTo: nil, proofKey: nil)
        try DPoPPolicy.checkBinding(boundTo: nil, proofKey: jkt)
    }

    @Test func boundGrantsNeedAProofOfTheirKey() throws {
        try DPoPPolicy.checkBinding(boundTo: jkt, proofKey: jkt)
        let missing = #expect(throws: OAuthError.self) {
            try DPoPPolicy.checkBinding(boundTo: jkt, proofKey: nil)
        }
        #expect(missing?.error == "invalid_dpop_proof")
        let other = #expect(throws: OAuthError.self) {
            try DPoPPolicy.checkBinding(boundTo: jkt, proofKey: "another-key-thumbprint")
        }
        #expect(other?.error == "invalid_grant")
    }

    @Test func accessTokenCarriesAndReturnsTheConfirmation() throws {
        var claims = AccessTokenClaims(
            issuer: Fixture.issuer, audience: Fixture.issuer, subject: "acct-1", clientID: "native-app",
            expiresAt: Fixture.now.addingTimeInterval(600), issuedAt: Fixture.now, jwtID: "jti-1",
            scope: ["openid"],
            authTime: nil)
        #expect(claims.json["cnf"] == nil)
        claims.confirmationJKT = jkt
        #expect(claims.json["cnf"] == .object(["jkt": .string(jkt)]))
        let token = try claims.sign(with: TokenClaimsTests.signer)
        let parsed = try AccessTokenClaims.verify(
            token, verifier: TokenClaimsTests.verifier, issuer: Fixture.issuer, audience: Fixture.issuer,
            now: Fixture.now)
        #expect(parsed.confirmationJKT == jkt)
    }

    @Test func tokenResponseNamesTheTokenType() {
        var response = TokenResponse(
            accessToken: "a", expiresIn: 60, refreshToken: nil, idToken: nil, scope: [])
        #expect(response.json["token_type"] == .string("Bearer"))
        response.tokenType = "DPoP"
        #expect(response.json["token_type"] == .string("DPoP"))
    }

    @Test func introspectionTellsTheBinding() {
        var token = IntrospectionResponse.ActiveToken(
            scope: [], clientID: "c", tokenType: "DPoP", expiresAt: nil, issuedAt: nil, subject: nil,
            audience: [],
            issuer: Fixture.issuer)
        token.confirmationJKT = jkt
        let json = IntrospectionResponse.active(token).json
        #expect(json["cnf"] == .object(["jkt": .string(jkt)]))
        #expect(json["token_type"] == .string("DPoP"))
    }

    @Test func dpopJKTAtTheAuthorizationEndpoint() throws {
        let request = try Fixture.validate(Fixture.authorize(Fixture.native, ["dpop_jkt": jkt]))
        #expect(request.dpopJKT == jkt)
        #expect(try Fixture.validate(Fixture.authorize(Fixture.native)).dpopJKT == nil)
        for bad in ["short", String(repeating: "a", count: 44), String(repeating: "a", count: 42) + "="] {
            let failure = #expect(throws: AuthorizationFailure.self) {
                try Fixture.validate(Fixture.authorize(Fixture.native, ["dpop_jkt": bad]))
            }
            #expect(failure?.error.error == "invalid_request")
        }
        let duplicated = #expect(throws: AuthorizationFailure.self) {
            try Fixture.validate(
                Fixture.authorize(Fixture.native, ["dpop_jkt": jkt], extra: [("dpop_jkt", jkt)]))
        }
        #expect(duplicated?.error.error == "invalid_request")
    }
}
