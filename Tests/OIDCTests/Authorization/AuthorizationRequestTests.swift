import Crypto
import Foundation
import Testing
@testable import OIDC

/// One row: the request, then the exact `error`, the hint (the situational part of
/// `error_description`), and whether the error goes to the redirect URI.
struct AuthorizationCase: CustomTestStringConvertible, Sendable {
    let name: String
    let parameters: Parameters
    let error: OAuthErrorCode
    let hint: String
    let redirects: Bool
    var testDescription: String { name }
}

@Suite struct AuthorizationRequestTests {
    static let native = Fixture.native
    static let cases: [AuthorizationCase] = [
        // Never redirected: client and redirect URI not established.
        .init(
            name: "missing client_id", parameters: Fixture.authorize(native, ["client_id": nil]),
            error: .invalidRequest, hint: "The 'client_id' parameter is missing.", redirects: false),
        .init(
            name: "duplicated client_id",
            parameters: Fixture.authorize(native, extra: [("client_id", "native-app")]),
            error: .invalidRequest, hint: "The 'client_id' parameter is duplicated.", redirects: false),
        .init(
            name: "unknown client", parameters: Fixture.authorize(native, ["client_id": "nobody"]),
            error: .invalidClient, hint: "The client is not registered.", redirects: false),
        .init(
            name: "missing redirect_uri", parameters: Fixture.authorize(native, ["redirect_uri": nil]),
            error: .invalidRequest, hint: "The 'redirect_uri' parameter is missing.", redirects: false),
        .init(
            name: "unregistered redirect_uri",
            parameters: Fixture.authorize(native, ["redirect_uri": "https://evil.example/cb"]),
            error: .invalidRequest, hint: "The 'redirect_uri' is not registered for this client.",
            redirects: false),
        .init(
            name: "duplicated redirect_uri",
            parameters: Fixture.authorize(
                native, extra: [("redirect_uri", "com.example.app:/oauth2redirect")]),
            error: .invalidRequest, hint: "The 'redirect_uri' parameter is duplicated.", redirects: false),
        .init(
            name: "request object with bad redirect_uri",
            parameters: Fixture.authorize(
                native, ["redirect_uri": "https://evil.example/cb", "request": "eyJ..."]),
            error: .invalidRequest, hint: "The 'redirect_uri' is not registered for this client.",
            redirects: false),
        // Redirected.
        .init(
            name: "fragment response mode",
            parameters: Fixture.authorize(native, ["response_mode": "fragment"]),
            error: .invalidRequest,
            hint: "The 'fragment' response mode is not allowed; use 'query' or 'form_post'.", redirects: true),
        .init(
            name: "form_post for native",
            parameters: Fixture.authorize(native, ["response_mode": "form_post"]),
            error: .invalidRequest, hint: "The 'form_post' response mode is only available to web clients.",
            redirects: true),
        .init(
            name: "unknown response mode", parameters: Fixture.authorize(native, ["response_mode": "jwt"]),
            error: .invalidRequest, hint: "The 'response_mode' is not supported; use 'query' or 'form_post'.",
            redirects: true),
        .init(
            name: "duplicated scope", parameters: Fixture.authorize(native, extra: [("scope", "openid")]),
            error: .invalidRequest, hint: "The 'scope' parameter is duplicated.", redirects: true),
        .init(
            name: "duplicated code_challenge",
            parameters: Fixture.authorize(native, extra: [("code_challenge", Fixture.challenge)]),
            error: .invalidRequest, hint: "The 'code_challenge' parameter is duplicated.", redirects: true),
        .init(
            name: "duplicated response_type",
            parameters: Fixture.authorize(native, extra: [("response_type", "code")]),
            error: .invalidRequest, hint: "The 'response_type' parameter is duplicated.", redirects: true),
        .init(
            name: "duplicated state", parameters: Fixture.authorize(native, extra: [("state", "other")]),
            error: .invalidRequest, hint: "The 'state' parameter is duplicated.", redirects: true),
        .init(
            name: "request object",
            parameters: Fixture.authorize(native, ["request": "eyJhbGciOiJub25lIn0.e30."]),
            error: .requestNotSupported, hint: "Send the parameters directly instead of a request object.",
            redirects: true),
        .init(
            name: "request_uri", parameters: Fixture.authorize(native, ["request_uri": "urn:example:req"]),
            error: .requestURINotSupported, hint: "Send the parameters directly instead of a request URI.",
            redirects: true),
        .init(
            name: "missing response_type", parameters: Fixture.authorize(native, ["response_type": nil]),
            error: .invalidRequest, hint: "The 'response_type' parameter is missing.", redirects: true),
        .init(
            name: "implicit", parameters: Fixture.authorize(native, ["response_type": "token"]),
            error: .unsupportedResponseType, hint: "Only the 'code' response type is supported.",
            redirects: true),
        .init(
            name: "hybrid", parameters: Fixture.authorize(native, ["response_type": "code id_token"]),
            error: .unsupportedResponseType, hint: "Only the 'code' response type is supported.",
            redirects: true),
        .init(
            name: "missing scope", parameters: Fixture.authorize(native, ["scope": nil]),
            error: .invalidScope, hint: "The 'scope' parameter is missing.", redirects: true),
        .init(
            name: "only unknown scopes", parameters: Fixture.authorize(native, ["scope": "admin write"]),
            error: .invalidScope, hint: "None of the requested scopes is available to this client.",
            redirects: true),
        .init(
            name: "missing PKCE",
            parameters: Fixture.authorize(native, ["code_challenge": nil, "code_challenge_method": nil]),
            error: .invalidRequest, hint: "PKCE is required: the 'code_challenge' parameter is missing.",
            redirects: true),
        .init(
            name: "plain PKCE", parameters: Fixture.authorize(native, ["code_challenge_method": "plain"]),
            error: .invalidRequest, hint: "The 'code_challenge_method' 'plain' is not allowed; use 'S256'.",
            redirects: true),
        .init(
            name: "confidential, PKCE required, none sent",
            parameters: Fixture.authorize(
                Fixture.web, ["code_challenge": nil, "code_challenge_method": nil]),
            error: .invalidRequest, hint: "PKCE is required: the 'code_challenge' parameter is missing.",
            redirects: true),
        .init(
            name: "exempt client without PKCE needs openid",
            parameters: Fixture.authorize(
                Fixture.exempt, ["code_challenge": nil, "code_challenge_method": nil, "scope": "api"]),
            error: .invalidRequest, hint: "PKCE is required: the 'code_challenge' parameter is missing.",
            redirects: true),
        .init(
            name: "prompt none with login", parameters: Fixture.authorize(native, ["prompt": "none login"]),
            error: .invalidRequest, hint: "The 'prompt' value 'none' cannot be combined with other values.",
            redirects: true),
        .init(
            name: "prompt none with select_account",
            parameters: Fixture.authorize(native, ["prompt": "select_account none"]),
            error: .invalidRequest, hint: "The 'prompt' value 'none' cannot be combined with other values.",
            redirects: true),
        .init(
            name: "unknown prompt", parameters: Fixture.authorize(native, ["prompt": "login bogus"]),
            error: .invalidRequest, hint: "A 'prompt' value is not supported.", redirects: true),
        .init(
            name: "negative max_age", parameters: Fixture.authorize(native, ["max_age": "-1"]),
            error: .invalidRequest, hint: "The 'max_age' parameter must be a non-negative integer.",
            redirects: true),
        .init(
            name: "non-numeric max_age", parameters: Fixture.authorize(native, ["max_age": "1h"]),
            error: .invalidRequest, hint: "The 'max_age' parameter must be a non-negative integer.",
            redirects: true),
        .init(
            name: "huge max_age", parameters: Fixture.authorize(native, ["max_age": "99999999999"]),
            error: .invalidRequest, hint: "The 'max_age' parameter must be a non-negative integer.",
            redirects: true),
        .init(
            name: "claims not JSON", parameters: Fixture.authorize(native, ["claims": "{id_token"]),
            error: .invalidRequest, hint: "The 'claims' parameter must be a JSON object.", redirects: true),
        .init(
            name: "claims id_token not object",
            parameters: Fixture.authorize(native, ["claims": "{\"id_token\":[\"email\"]}"]),
            error: .invalidRequest, hint: "The 'claims' member 'id_token' must be a JSON object.",
            redirects: true),
        .init(
            name: "duplicated claims",
            parameters: Fixture.authorize(native, ["claims": "{}"], extra: [("claims", "{}")]),
            error: .invalidRequest, hint: "The 'claims' parameter is duplicated.", redirects: true),
    ]

    @Test(arguments: cases)
    func refused(_ row: AuthorizationCase) throws {
        let failure = try #require(throws: AuthorizationFailure.self) { try Fixture.validate(row.parameters) }
        #expect(failure.error.error == row.error.rawValue)
        #expect(failure.error.errorDescription == row.error.fixedDescription + " " + row.hint)
        #expect(failure.error.redirectable == row.redirects)
        #expect((failure.response != nil) == row.redirects)
        if row.redirects {
            let redirect = try #require(failure.redirect)
            #expect(redirect.issuer == Fixture.issuer)
            #expect(redirect.responseMode == .query)
        }
    }

    @Test func errorRedirectCarriesStateAndIss() throws {
        let failure = try #require(throws: AuthorizationFailure.self) {
            try Fixture.validate(
                Fixture.authorize(Fixture.native, ["response_type": "token", "state": "a b&c=d/é"]))
        }
        let expected =
            "com.example.app:/oauth2redirect?error=unsupported_response_type&error_description="
            + "The%20response%20type%20is%20not%20supported.%20Only%20the%20%27code%27%20response%20type%20is%20supported."
            + "&state=a%20b%26c%3Dd%2F%C3%A9&iss=https%3A%2F%2Fid.example.com"
        #expect(failure.response == .redirect(location: expected))
    }

    @Test func duplicatedStateIsNotEchoed() throws {
        let failure = try #require(throws: AuthorizationFailure.self) {
            try Fixture.validate(Fixture.authorize(Fixture.native, extra: [("state", "second")]))
        }
        #expect(failure.redirect?.state == nil)
    }

    @Test func formPostErrorForWebClient() throws {
        let failure = try #require(throws: AuthorizationFailure.self) {
            try Fixture.validate(
                Fixture.authorize(Fixture.web, ["response_mode": "form_post", "prompt": "none login"]))
        }
        guard case .formPost(let action, let fields)? = failure.response else {
            Issue.record("expected form_post")
            return
        }
        #expect(action == "https://app.example.com/callback")
        #expect(fields.map(\.name) == ["error", "error_description", "state", "iss"])
        #expect(fields[0].value == "invalid_request")
        #expect(fields[2].value == "af0ifjsldkj")
    }

    /// A request object may carry `response_mode` alone (Core §6.1): its refusal reaches a web
    /// client the way it asked for; a native client, or anything unreadable, gets the query.
    @Test func requestObjectRefusalUsesItsResponseMode() throws {
        func refusal(_ client: OAuthClient, _ object: String) throws -> AuthorizationFailure {
            try #require(throws: AuthorizationFailure.self) {
                try Fixture.validate(Fixture.authorize(client, ["request": object]))
            }
        }
        let formPost =
            "eyJhbGciOiJub25lIn0." + Base64URL.encode(Array(#"{"response_mode":"form_post"}"#.utf8)) + "."
        let web = try refusal(Fixture.web, formPost)
        #expect(web.error.code == .requestNotSupported)
        #expect(web.redirect?.responseMode == .formPost)
        #expect(try refusal(Fixture.native, formPost).redirect?.responseMode == .query)
        #expect(try refusal(Fixture.web, "eyJhbGciOiJub25lIn0.e30.").redirect?.responseMode == .query)
        #expect(try refusal(Fixture.web, "not a jwt").redirect?.responseMode == .query)
    }

    @Test func validRequest() throws {
        let request = try Fixture.validate(
            Fixture.authorize(
                Fixture.native,
                [
                    "scope": "openid email profile offline_access unknown openid", "prompt": "login consent",
                    "max_age": "300",
                    "login_hint": "alice@example.com", "ui_locales": "ja en",
                    "claims":
                        "{\"id_token\":{\"email\":{\"essential\":true},\"name\":null,\"birthdate\":null,\"acr\":null,\"custom\":null},\"userinfo\":{\"phone_number\":null}}",
                    "redirect_uri": "http://127.0.0.1:49152/callback",
                ], extra: [("unknown_param", "x"), ("unknown_param", "y")]))
        #expect(request.client.clientID == "native-app")
        #expect(
            request.redirect
                == AuthorizationRedirect(
                    redirectURI: "http://127.0.0.1:49152/callback", responseMode: .query,
                    state: "af0ifjsldkj", issuer: Fixture.issuer))
        #expect(request.scopes == ["openid", "email", "profile", "offline_access"])
        #expect(request.isOpenID)
        #expect(request.nonce == "n-0S6_WzA2Mj")
        #expect(request.codeChallenge == Fixture.challenge)
        #expect(request.prompt == [.login, .consent])
        #expect(request.maxAge == 300)
        #expect(request.loginHint == "alice@example.com")
        #expect(request.uiLocales == ["ja", "en"])
        #expect(request.idTokenClaims == ["email", "name", "birthdate"])
    }

    /// Core §5.5: requested standard claims are released in the member that asked for them
    /// even without their scope; the consent then covers their scopes too.
    @Test func claimsBeyondTheScopeWidenTheConsent() throws {
        let request = try Fixture.validate(
            Fixture.authorize(
                Fixture.native,
                [
                    "scope": "openid",
                    "claims": #"{"id_token":{"email":null},"userinfo":{"name":{"essential":true},"x":null}}"#,
                ]))
        #expect(request.scopes == ["openid"])
        #expect(request.idTokenClaims == ["email"])
        #expect(request.userinfoClaims == ["name"])
        #expect(request.consentScopes == ["openid", "email", "profile"])
    }

    /// A claim whose scope the client may not obtain is never released.
    @Test func claimsOutsideTheClientsScopesAreIgnored() throws {
        var client = Fixture.native
        client.scopes = ["openid", "email"]
        let request = try AuthorizationRequest.validate(
            Fixture.authorize(
                client, ["scope": "openid", "claims": #"{"userinfo":{"name":null,"email":null}}"#]),
            client: client, issuer: Fixture.issuer)
        #expect(request.userinfoClaims == ["email"])
        #expect(request.consentScopes == ["openid", "email"])
    }

    @Test func acrValuesAndAcrClaim() throws {
        let voluntary = try Fixture.validate(Fixture.authorize(Fixture.native, ["acr_values": "phrh phr"]))
        #expect(voluntary.acr == AuthenticationContextRequest(values: ["phrh", "phr"], essential: false))
        let essential = try Fixture.validate(
            Fixture.authorize(
                Fixture.native, ["claims": #"{"id_token":{"acr":{"essential":true,"value":"phr"}}}"#]))
        #expect(essential.acr == AuthenticationContextRequest(values: ["phr"], essential: true))
        #expect(try Fixture.validate(Fixture.authorize(Fixture.native)).acr == nil)
    }

    // MARK: - id_token_hint (Core §3.1.2.1)

    static func hint(
        audience: String = "native-app", issuer: String = Fixture.issuer,
        signer: JWSSigner = LogoutRequestTests.signer,
        expired: Bool = false
    ) throws -> String {
        try LogoutRequestTests.hint(
            subject: "acct-1", audience: audience, issuer: issuer, expired: expired, signer: signer)
    }

    static func validateHinted(_ hint: String, verifier: JWSVerifier? = LogoutRequestTests.verifier)
        throws(AuthorizationFailure) -> AuthorizationRequest
    {
        try AuthorizationRequest.validate(
            Fixture.authorize(Fixture.native, ["id_token_hint": hint]), client: Fixture.native,
            issuer: Fixture.issuer, verifier: verifier)
    }

    @Test func idTokenHintOfThisClientNamesItsSubjectEvenExpired() throws {
        #expect(try Self.validateHinted(try Self.hint()).idTokenHintSubject == "acct-1")
        #expect(try Self.validateHinted(try Self.hint(expired: true)).idTokenHintSubject == "acct-1")
        #expect(try Self.validateHinted(try Self.hint()).expectedSubjects == ["acct-1"])
    }

    @Test func invalidIDTokenHintsAreRefused() throws {
        let other = LogoutRequestTests.otherSigner
        let accessToken = try AccessTokenClaims(
            issuer: Fixture.issuer, audience: Fixture.issuer, subject: "acct-1", clientID: "native-app",
            expiresAt: Fixture.now, issuedAt: Fixture.now, jwtID: "j", scope: ["openid"], authTime: nil
        ).sign(with: LogoutRequestTests.signer)
        let hints: [(String, String, JWSVerifier?)] = [
            ("another client's", try Self.hint(audience: "web-app"), LogoutRequestTests.verifier),
            ("another issuer's", try Self.hint(issuer: "https://evil.example"), LogoutRequestTests.verifier),
            ("another key's", try Self.hint(signer: other), LogoutRequestTests.verifier),
            ("an access token", accessToken, LogoutRequestTests.verifier),
            ("not a JWT", "not-a-jwt", LogoutRequestTests.verifier),
            ("no keys to verify with", try Self.hint(), nil),
        ]
        for (name, hint, verifier) in hints {
            let failure = try #require(throws: AuthorizationFailure.self, "\(name)") {
                try Self.validateHinted(hint, verifier: verifier)
            }
            #expect(
                failure.error
                    == .invalidRequest("The 'id_token_hint' is not a valid ID token for this client."),
                "\(name)")
            #expect(failure.response != nil, "\(name)")
        }
    }

    @Test func offlineAccessDroppedWithoutRefreshGrant() throws {
        var client = Fixture.native
        client.grantTypes = [.authorizationCode]
        let request = try AuthorizationRequest.validate(
            Fixture.authorize(client, ["scope": "openid offline_access"]), client: client,
            issuer: Fixture.issuer)
        #expect(request.scopes == ["openid"])
    }

    @Test func emptyParametersCountAsAbsent() throws {
        let request = try Fixture.validate(
            Fixture.authorize(Fixture.native, ["prompt": "", "max_age": "", "state": ""]))
        #expect(request.prompt.isEmpty && request.maxAge == nil && request.redirect.state == nil)
    }

    @Test func exemptConfidentialClientWithNonce() throws {
        let request = try Fixture.validate(
            Fixture.authorize(
                Fixture.exempt,
                ["code_challenge": nil, "code_challenge_method": nil, "response_mode": "form_post"]))
        #expect(request.codeChallenge == nil)
        #expect(request.redirect.responseMode == .formPost)
    }

    /// Core §3.1.2.1: `nonce` is optional in the code flow, also for a client exempt from PKCE.
    @Test func exemptConfidentialClientWithoutNonce() throws {
        let request = try Fixture.validate(
            Fixture.authorize(
                Fixture.exempt, ["code_challenge": nil, "code_challenge_method": nil, "nonce": nil]))
        #expect(request.codeChallenge == nil)
        #expect(request.nonce == nil)
    }

    /// PKCE stays mandatory for a public client even when it sends a `nonce`.
    @Test func publicClientWithNonceStillNeedsPKCE() throws {
        let failure = try #require(throws: AuthorizationFailure.self) {
            try Fixture.validate(
                Fixture.authorize(Fixture.native, ["code_challenge": nil, "code_challenge_method": nil]))
        }
        #expect(
            failure.error == .invalidRequest("PKCE is required: the 'code_challenge' parameter is missing."))
    }

    @Test func clientWithoutCodeGrant() throws {
        var client = Fixture.web
        client.grantTypes = [.clientCredentials]
        let failure = try #require(throws: AuthorizationFailure.self) {
            try AuthorizationRequest.validate(
                Fixture.authorize(client), client: client, issuer: Fixture.issuer)
        }
        #expect(
            failure.error
                == OAuthError(
                    .unauthorizedClient, hint: "The client may not use the authorization code grant."))
    }

    @Test func parsesFormEncodedQuery() throws {
        let parameters = try Parameters(formEncoded: "a=1&b=x+y%2Bz&c&d=&e=%E3%81%82")
        #expect(parameters.items.map(\.name) == ["a", "b", "c", "d", "e"])
        #expect(try parameters.value("b") == "x y+z")
        #expect(try parameters.value("c") == nil)
        #expect(try parameters.value("e") == "あ")
        #expect(throws: OAuthError(.invalidRequest, hint: "The parameters are not correctly form-encoded.")) {
            try Parameters(formEncoded: "a=%zz")
        }
        #expect(throws: OAuthError(.invalidRequest, hint: "The parameters are not correctly form-encoded.")) {
            try Parameters(formEncoded: "a=%FF")
        }
    }
}

@Suite struct AuthorizationResponseTests {
    static func redirect(_ uri: String, mode: ResponseMode = .query, state: String? = "xyz")
        -> AuthorizationRedirect
    {
        AuthorizationRedirect(redirectURI: uri, responseMode: mode, state: state, issuer: Fixture.issuer)
    }

    @Test(arguments: [
        (
            "https://app.example.com/callback",
            "https://app.example.com/callback?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz&iss=https%3A%2F%2Fid.example.com"
        ),
        (
            "https://app.example.com/cb?tenant=a",
            "https://app.example.com/cb?tenant=a&code=SplxlOBeZQQYbYS6WxSbIA&state=xyz&iss=https%3A%2F%2Fid.example.com"
        ),
        (
            "https://app.example.com/cb?",
            "https://app.example.com/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz&iss=https%3A%2F%2Fid.example.com"
        ),
        (
            "com.example.app:/oauth2redirect",
            "com.example.app:/oauth2redirect?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz&iss=https%3A%2F%2Fid.example.com"
        ),
    ])
    func successQuery(uri: String, expected: String) {
        #expect(Self.redirect(uri).success(code: "SplxlOBeZQQYbYS6WxSbIA") == .redirect(location: expected))
    }

    @Test func successWithoutState() {
        #expect(
            Self.redirect("https://a.example/cb", state: nil).success(code: "c")
                == .redirect(location: "https://a.example/cb?code=c&iss=https%3A%2F%2Fid.example.com"))
    }

    @Test func successFormPost() {
        let response = Self.redirect("https://a.example/cb", mode: .formPost, state: "<s>&\"").success(
            code: "c")
        #expect(
            response
                == .formPost(
                    action: "https://a.example/cb",
                    fields: [
                        (name: "code", value: "c"), (name: "state", value: "<s>&\""),
                        (name: "iss", value: Fixture.issuer),
                    ]))
    }
}
