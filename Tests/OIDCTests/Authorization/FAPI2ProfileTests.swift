import Testing
@testable import OIDC

/// FAPI 2.0 Security Profile rules that are single values or configuration checks.
@Suite struct FAPI2ProfileTests {
    static var fapi: OAuthClient {
        var client = Fixture.web
        client.profile = .fapi2
        client.tokenEndpointAuthMethod = .privateKeyJWT
        return client
    }

    @Test func codesOfAFAPIClientLiveAtMost60Seconds() {
        #expect(FAPI2Profile.codeLifetime(configured: 300, for: Self.fapi) == 60)
        #expect(FAPI2Profile.codeLifetime(configured: 30, for: Self.fapi) == 30)
        #expect(FAPI2Profile.codeLifetime(configured: 300, for: Fixture.web) == 300)
    }

    @Test func onlyTheIssuerIsAnAssertionAudienceForAFAPIClient() {
        let accepted = ["https://id.example.com/token", "https://id.example.com"]
        #expect(
            FAPI2Profile.assertionAudiences(
                for: Self.fapi, issuer: "https://id.example.com", accepted: accepted)
                == ["https://id.example.com"])
        #expect(
            FAPI2Profile.assertionAudiences(
                for: Fixture.web, issuer: "https://id.example.com", accepted: accepted)
                == accepted)
    }

    @Test func aFAPIClientNeedsPKCEAndPushedRequests() throws {
        #expect(Self.fapi.pkceRequired)
        #expect(throws: AuthorizationFailure.self) {
            try AuthorizationRequest.validate(
                Fixture.authorize(Self.fapi), client: Self.fapi, issuer: Fixture.issuer)
        }
        _ = try AuthorizationRequest.validate(
            Fixture.authorize(Self.fapi), client: Self.fapi, issuer: Fixture.issuer, pushed: true)
    }

    @Test func configurationAgainstTheProfileIsRefused() {
        let keys = { (auth: String, type: String, grants: [String], pkce: Bool) in
            FAPI2Profile.configurationProblems(
                authMethod: auth, applicationType: type, grantTypes: grants, requirePKCE: pkce
            ).map(\.key)
        }
        #expect(keys("private_key_jwt", "web", ["authorization_code"], true) == [])
        #expect(
            keys("client_secret_basic", "web", ["authorization_code"], true) == ["token_endpoint_auth_method"]
        )
        #expect(
            keys("client_secret_post", "web", ["authorization_code"], true) == ["token_endpoint_auth_method"])
        #expect(keys("none", "native", ["authorization_code"], true) == ["profile"])
        // Refresh tokens are allowed: a fapi2 client's are kept, not rotated (§5.3.2.1).
        #expect(keys("private_key_jwt", "web", ["authorization_code", "refresh_token"], true) == [])
        #expect(keys("private_key_jwt", "web", ["authorization_code"], false) == ["require_pkce"])
    }
}
