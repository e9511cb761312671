import Foundation
import Testing

@testable import OIDC

@Suite struct AuthorizationChallengeRequestTests {
    static let app: OAuthClient = {
        var client = Fixture.native
        client.firstParty = true
        return client
    }()

    static func request(_ overrides: [String: String?] = [:], extra: [(String, String)] = []) -> Parameters {
        var items: [(String, String)] = [
            ("client_id", "native-app"), ("response_type", "code"), ("scope", "openid profile"),
            ("code_challenge", Fixture.challenge), ("code_challenge_method", "S256"),
        ]
        for (name, value) in overrides {
            items.removeAll { $0.0 == name }
            if let value { items.append((name, value)) }
        }
        return Fixture.params(items + extra)
    }

    static func refusal(_ parameters: Parameters, client: OAuthClient = app) -> OAuthError? {
        do {
            _ = try AuthorizationChallengeRequest.validate(parameters, client: client)
            return nil
        } catch {
            return error
        }
    }

    @Test func aFirstPartyNativeClientGetsItsRequest() throws {
        let request = try AuthorizationChallengeRequest.validate(
            Self.request(extra: [("acr_values", "phr basic")]), client: Self.app)
        #expect(request.clientID == "native-app")
        #expect(request.codeChallenge == Fixture.challenge)
        #expect(request.scopes == ["openid", "profile"])
        #expect(request.redirectURI == nil)
        #expect(request.acrValues == ["phr", "basic"])
        #expect(request.dpopJKT == nil)
    }

    @Test func aNamedRedirectURIAndDPoPKeyAreKept() throws {
        let jkt = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
        let request = try AuthorizationChallengeRequest.validate(
            Self.request(extra: [
                ("redirect_uri", "https://app.example.com/native-callback"), ("dpop_jkt", jkt),
            ]),
            client: Self.app)
        #expect(request.redirectURI == "https://app.example.com/native-callback")
        #expect(request.dpopJKT == jkt)
    }

    @Test func clientsThatAreNotFirstPartyNativeAppsAreRefused() {
        var web = Fixture.web
        web.firstParty = true
        for client in [Fixture.native, web] {
            let error = Self.refusal(Self.request(), client: client)
            #expect(error?.code == .unauthorizedClient)
            #expect(
                error?.hint == "The authorization challenge endpoint is only for first-party native apps.")
        }
        var noCodeGrant = Self.app
        noCodeGrant.grantTypes = [.refreshToken]
        #expect(Self.refusal(Self.request(), client: noCodeGrant)?.code == .unauthorizedClient)
    }

    @Test(
        arguments: [
            (
                ["code_challenge": nil, "code_challenge_method": nil], OAuthErrorCode.invalidRequest,
                "PKCE is required: the 'code_challenge' parameter is missing."
            ),
            (
                ["code_challenge_method": "plain"], .invalidRequest,
                "The 'code_challenge_method' 'plain' is not allowed; use 'S256'."
            ),
            (["response_type": "token"], .unsupportedResponseType, "The 'response_type' must be 'code'."),
            (["scope": nil], .invalidScope, "The 'scope' parameter is missing."),
            (["scope": "admin"], .invalidScope, "None of the requested scopes is available to this client."),
            (
                ["redirect_uri": "https://evil.example/cb"], .invalidRequest,
                "The 'redirect_uri' is not registered for this client."
            ),
            (
                ["dpop_jkt": "not-a-thumbprint"], .invalidRequest,
                "The 'dpop_jkt' parameter is not a JWK SHA-256 thumbprint."
            ),
        ] as [([String: String?], OAuthErrorCode, String)])
    func refusals(overrides: [String: String?], code: OAuthErrorCode, hint: String) {
        let error = Self.refusal(Self.request(overrides))
        #expect(error?.code == code)
        #expect(error?.hint == hint)
    }

    @Test func aDuplicatedParameterIsRefused() {
        let error = Self.refusal(Self.request(extra: [("code_challenge", Fixture.challenge)]))
        #expect(error?.code == .invalidRequest)
        #expect(error?.hint == "The 'code_challenge' parameter is duplicated.")
    }
}
