import Foundation
import Testing
@testable import OIDC

@Suite struct TokenRequestTests {
    static func parse(_ items: [(String, String)]) throws(OAuthError) -> TokenRequest {
        try TokenRequest.parse(Fixture.params(items))
    }

    @Test func grants() throws {
        #expect(
            try Self.parse([
                ("grant_type", "authorization_code"), ("code", "c"), ("redirect_uri", "https://a/cb"),
                ("code_verifier", Fixture.verifier), ("client_id", "x"), ("extra", "1"), ("extra", "2"),
            ])
                == .authorizationCode(code: "c", redirectURI: "https://a/cb", codeVerifier: Fixture.verifier))
        #expect(
            try Self.parse([("grant_type", "refresh_token"), ("refresh_token", "r")])
                == .refreshToken(refreshToken: "r", scope: nil))
        #expect(
            try Self.parse([
                ("grant_type", "refresh_token"), ("refresh_token", "r"), ("scope", "openid  email"),
            ])
                == .refreshToken(refreshToken: "r", scope: ["openid", "email"]))
        #expect(
            try Self.parse([("grant_type", "client_credentials"), ("scope", "api")])
                == .clientCredentials(scope: ["api"]))
        #expect(try Self.parse([("grant_type", "client_credentials")]) == .clientCredentials(scope: []))
    }

    @Test(
        arguments: [
            ([], OAuthErrorCode.invalidRequest, "The 'grant_type' parameter is missing."),
            (
                [("grant_type", "password"), ("username", "a"), ("password", "b")], .unsupportedGrantType,
                "Use 'authorization_code', 'refresh_token' or 'client_credentials'."
            ),
            (
                [("grant_type", "implicit")], .unsupportedGrantType,
                "Use 'authorization_code', 'refresh_token' or 'client_credentials'."
            ),
            (
                [("grant_type", "authorization_code"), ("redirect_uri", "https://a/cb")], .invalidRequest,
                "The 'code' parameter is missing."
            ),
            (
                [("grant_type", "authorization_code"), ("code", ""), ("redirect_uri", "https://a/cb")],
                .invalidRequest,
                "The 'code' parameter is missing."
            ),
            ([("grant_type", "refresh_token")], .invalidRequest, "The 'refresh_token' parameter is missing."),
            (
                [("grant_type", "authorization_code"), ("grant_type", "authorization_code")], .invalidRequest,
                "The 'grant_type' parameter is duplicated."
            ),
            (
                [("grant_type", "authorization_code"), ("code", "a"), ("code", "b"), ("redirect_uri", "x")],
                .invalidRequest,
                "The 'code' parameter is duplicated."
            ),
            (
                [
                    ("grant_type", "authorization_code"), ("code", "a"), ("redirect_uri", "x"),
                    ("code_verifier", "v"), ("code_verifier", "w"),
                ],
                .invalidRequest, "The 'code_verifier' parameter is duplicated."
            ),
            (
                [("grant_type", "refresh_token"), ("refresh_token", "r"), ("scope", "a"), ("scope", "b")],
                .invalidRequest,
                "The 'scope' parameter is duplicated."
            ),
        ] as [([(String, String)], OAuthErrorCode, String)])
    func parseErrors(items: [(String, String)], code: OAuthErrorCode, hint: String) throws {
        let error = try #require(throws: OAuthError.self) { try Self.parse(items) }
        #expect(error.error == code.rawValue)
        #expect(error.errorDescription == code.fixedDescription + " " + hint)
        #expect(error.status == 400)
        let body = try JSONDecoder().decode([String: String].self, from: Data(error.jsonBody))
        #expect(body == ["error": code.rawValue, "error_description": code.fixedDescription + " " + hint])
    }

    @Test func grantAllowedForClient() throws {
        try TokenRequest.clientCredentials(scope: []).checkAllowed(for: Fixture.web)
        #expect(throws: OAuthError(.unauthorizedClient, hint: "The client may not use this grant type.")) {
            try TokenRequest.clientCredentials(scope: []).checkAllowed(for: Fixture.native)
        }
        var publicClient = Fixture.native
        publicClient.grantTypes.insert(.clientCredentials)
        #expect(
            throws: OAuthError(
                .unauthorizedClient, hint: "Public clients may not use the client credentials grant.")
        ) {
            try TokenRequest.clientCredentials(scope: []).checkAllowed(for: publicClient)
        }
    }

    static let issued = IssuedAuthorizationCode(
        clientID: "native-app", redirectURI: "http://127.0.0.1:5000/callback",
        codeChallenge: Fixture.challenge,
        scopes: ["openid", "profile"], nonce: "n", accountID: "acct-1", authTime: Fixture.now, amr: ["pwd"],
        sessionID: "sid", idTokenClaims: [], expiresAt: Fixture.now.addingTimeInterval(60))

    static func redeem(
        _ stored: IssuedAuthorizationCode? = issued, redirectURI: String? = "http://127.0.0.1:5000/callback",
        verifier: String? = Fixture.verifier, client: OAuthClient = Fixture.native, now: Date = Fixture.now
    ) throws(OAuthError) -> IssuedAuthorizationCode {
        try TokenGrantValidation.authorizationCode(
            code: stored, redirectURI: redirectURI, codeVerifier: verifier, client: client, now: now)
    }

    @Test func codeRedeemed() throws {
        #expect(try Self.redeem() == Self.issued)
    }

    /// A code of the authorization challenge endpoint names no redirect URI, and its token
    /// request needs none.
    @Test func codeWithoutRedirectURIRedeemedWithoutOne() throws {
        var issued = Self.issued
        issued.redirectURI = nil
        #expect(try Self.redeem(issued, redirectURI: nil) == issued)
    }

    @Test func codeFailures() throws {
        let gone = OAuthError(
            .invalidGrant, hint: "The authorization code is invalid, expired or already used.")
        #expect(throws: gone) { try Self.redeem(nil) }
        #expect(throws: gone) { try Self.redeem(now: Fixture.now.addingTimeInterval(60)) }
        #expect(
            throws: OAuthError(.invalidGrant, hint: "The authorization code was issued to another client.")
        ) {
            try Self.redeem(client: Fixture.web)
        }
        // Must equal the authorization request's value exactly, even for loopback ports.
        #expect(
            throws: OAuthError(
                .invalidGrant, hint: "The 'redirect_uri' does not match the authorization request.")
        ) {
            try Self.redeem(redirectURI: "http://127.0.0.1:5001/callback")
        }
        // RFC 6749 §4.1.3: required when the authorization request carried one.
        #expect(throws: OAuthError.invalidRequest("The 'redirect_uri' parameter is missing.")) {
            try Self.redeem(redirectURI: nil)
        }
        #expect(
            throws: OAuthError(
                .invalidGrant, hint: "The 'code_verifier' does not match the 'code_challenge'.")
        ) {
            try Self.redeem(verifier: String(repeating: "x", count: 43))
        }
        #expect(throws: OAuthError(.invalidGrant, hint: "The 'code_verifier' parameter is missing.")) {
            try Self.redeem(verifier: nil)
        }
    }

    @Test func issuedCodeFromRequest() throws {
        let request = try Fixture.validate(Fixture.authorize(Fixture.native))
        let session = BrowserSession(
            accountID: "acct-1", authTime: Fixture.now, amr: ["swk", "user"], sessionID: "sid")
        let code = IssuedAuthorizationCode(
            request: request, session: session, expiresAt: Fixture.now.addingTimeInterval(60))
        #expect(
            code.redirectURI == "com.example.app:/oauth2redirect" && code.codeChallenge == Fixture.challenge)
        #expect(
            code.scopes == ["openid", "profile"] && code.nonce == "n-0S6_WzA2Mj"
                && code.amr == ["swk", "user"])
    }

    @Test func refreshScope() throws {
        let granted = ["openid", "profile", "email", "offline_access"]
        #expect(try TokenGrantValidation.refreshScope(requested: nil, granted: granted) == granted)
        #expect(
            try TokenGrantValidation.refreshScope(requested: ["email", "openid"], granted: granted) == [
                "openid", "email",
            ])
        #expect(
            throws: OAuthError(
                .invalidScope, hint: "The requested scope exceeds the scope originally granted.")
        ) {
            try TokenGrantValidation.refreshScope(requested: ["openid", "api"], granted: granted)
        }
    }

    @Test func clientCredentialsScope() {
        #expect(
            TokenGrantValidation.clientCredentialsScope(
                requested: ["api", "openid", "offline_access", "unknown", "api"], client: Fixture.web) == [
                    "api"
                ])
    }

    @Test func tokenResponseBody() throws {
        let response = TokenResponse(
            accessToken: "at", expiresIn: 300, refreshToken: "rt", idToken: "it", scope: ["openid", "email"])
        #expect(
            String(decoding: response.jsonBody, as: UTF8.self)
                == #"{"access_token":"at","expires_in":300,"id_token":"it","refresh_token":"rt","scope":"openid email","token_type":"Bearer"}"#
        )
        let minimal = TokenResponse(
            accessToken: "at", expiresIn: 60, refreshToken: nil, idToken: nil, scope: [])
        #expect(
            String(decoding: minimal.jsonBody, as: UTF8.self)
                == #"{"access_token":"at","expires_in":60,"token_type":"Bearer"}"#)
    }
}
