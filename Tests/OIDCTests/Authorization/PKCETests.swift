import Testing
@testable import OIDC

@Suite struct PKCETests {
    static let prefix = OAuthErrorCode.invalidRequest.fixedDescription + " "

    @Test func rfc7636AppendixB() {
        #expect(PKCE.challenge(for: Fixture.verifier) == Fixture.challenge)
    }

    @Test(arguments: [
        (String?.none, String?.none, true, "PKCE is required: the 'code_challenge' parameter is missing."),
        (nil, "S256", false, "The 'code_challenge_method' parameter was sent without 'code_challenge'."),
        (
            Fixture.challenge, nil, true,
            "The 'code_challenge_method' parameter is missing; only 'S256' is supported."
        ),
        (Fixture.challenge, "plain", true, "The 'code_challenge_method' 'plain' is not allowed; use 'S256'."),
        (Fixture.challenge, "s256", true, "The 'code_challenge_method' is not supported; use 'S256'."),
        (
            String(Fixture.challenge.dropLast()), "S256", true,
            "The 'code_challenge' must be the 43-character base64url SHA-256 of the verifier."
        ),
        (
            Fixture.challenge + "A", "S256", true,
            "The 'code_challenge' must be the 43-character base64url SHA-256 of the verifier."
        ),
        (
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM", "S256", true,
            "The 'code_challenge' must be the 43-character base64url SHA-256 of the verifier."
        ),
    ])
    func challengeErrors(challenge: String?, method: String?, required: Bool, hint: String) {
        #expect(throws: OAuthError(.invalidRequest, hint: hint)) {
            try PKCE.validateChallenge(challenge, method: method, required: required)
        }
        do {
            _ = try PKCE.validateChallenge(challenge, method: method, required: required)
        } catch {
            #expect(error.error == "invalid_request")
            #expect(error.errorDescription == Self.prefix + hint)
        }
    }

    @Test func challengeAccepted() throws {
        #expect(
            try PKCE.validateChallenge(Fixture.challenge, method: "S256", required: true) == Fixture.challenge
        )
        #expect(try PKCE.validateChallenge(nil, method: nil, required: false) == nil)
    }

    @Test(arguments: [
        (String?.none, OAuthErrorCode.invalidGrant, "The 'code_verifier' parameter is missing."),
        (
            String(repeating: "a", count: 42), .invalidRequest,
            "The 'code_verifier' must be 43 to 128 unreserved characters."
        ),
        (
            String(repeating: "a", count: 129), .invalidRequest,
            "The 'code_verifier' must be 43 to 128 unreserved characters."
        ),
        (
            String(repeating: "a", count: 42) + "+", .invalidRequest,
            "The 'code_verifier' must be 43 to 128 unreserved characters."
        ),
        (
            String(repeating: "a", count: 42) + " ", .invalidRequest,
            "The 'code_verifier' must be 43 to 128 unreserved characters."
        ),
        (
            String(repeating: "a", count: 42) + "é", .invalidRequest,
            "The 'code_verifier' must be 43 to 128 unreserved characters."
        ),
        (
            String(repeating: "a", count: 43), .invalidGrant,
            "The 'code_verifier' does not match the 'code_challenge'."
        ),
        (Fixture.challenge, .invalidGrant, "The 'code_verifier' does not match the 'code_challenge'."),
    ])
    func verifierErrors(verifier: String?, code: OAuthErrorCode, hint: String) {
        #expect(throws: OAuthError(code, hint: hint)) {
            try PKCE.verify(verifier: verifier, challenge: Fixture.challenge)
        }
    }

    @Test func verifierAccepted() throws {
        try PKCE.verify(verifier: Fixture.verifier, challenge: Fixture.challenge)
        try PKCE.verify(
            verifier: String(repeating: "-._~", count: 32),
            challenge: PKCE.challenge(for: String(repeating: "-._~", count: 32)))
        try PKCE.verify(verifier: nil, challenge: nil)
        #expect(
            throws: OAuthError(
                .invalidGrant,
                hint: "A 'code_verifier' was sent but the authorization request had no 'code_challenge'.")
        ) {
            try PKCE.verify(verifier: Fixture.verifier, challenge: nil)
        }
    }
}
