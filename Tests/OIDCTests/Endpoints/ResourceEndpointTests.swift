import Foundation
import Testing
@testable import OIDC

@Suite struct BearerTokenTests {
    static func extract(
        _ header: String?, method: String = "GET", contentType: String? = nil,
        body: [(String, String)]? = nil,
        query: [(String, String)]? = nil
    ) throws(OAuthError) -> String? {
        try BearerToken.extract(
            authorization: header, method: method, contentType: contentType, body: body.map(Fixture.params),
            query: query.map(Fixture.params))
    }

    @Test func extraction() throws {
        #expect(try Self.extract("Bearer mF_9.B5f-4.1JqM") == "mF_9.B5f-4.1JqM")
        #expect(try Self.extract("bearer abc+/=") == "abc+/=")
        #expect(try Self.extract(nil) == nil)
        #expect(try Self.extract("Basic abc") == nil)
        #expect(
            try Self.extract(
                nil, method: "POST", contentType: "application/x-www-form-urlencoded; charset=utf-8",
                body: [("access_token", "tok")]) == "tok")
        // The body is only read for form-encoded POSTs.
        #expect(
            try Self.extract(
                nil, method: "GET", contentType: "application/x-www-form-urlencoded",
                body: [("access_token", "t")]) == nil)
        #expect(
            try Self.extract(
                nil, method: "POST", contentType: "application/json", body: [("access_token", "t")]) == nil)
        #expect(try Self.extract("Bearer abc", query: [("other", "1")]) == "abc")
    }

    @Test(
        arguments: [
            ("Bearer", nil, nil, "The Authorization header is not a valid Bearer credential."),
            ("Bearer a b", nil, nil, "The Authorization header is not a valid Bearer credential."),
            ("Bearer ===", nil, nil, "The Authorization header is not a valid Bearer credential."),
            ("Bearer a=b", nil, nil, "The Authorization header is not a valid Bearer credential."),
            (
                nil, nil, [("access_token", "t")],
                "Send the access token in the Authorization header, not in the query."
            ),
            ("Bearer abc", [("access_token", "t")], nil, "Send the access token by exactly one method."),
            (
                nil, [("access_token", "a"), ("access_token", "b")], nil,
                "The 'access_token' parameter is duplicated."
            ),
        ] as [(String?, [(String, String)]?, [(String, String)]?, String)])
    func refused(header: String?, body: [(String, String)]?, query: [(String, String)]?, hint: String) throws
    {
        let error = try #require(throws: OAuthError.self) {
            try Self.extract(
                header, method: "POST", contentType: "application/x-www-form-urlencoded", body: body,
                query: query)
        }
        #expect(error == OAuthError(.invalidRequest, hint: hint))
    }

    @Test func challenges() {
        #expect(
            BearerToken.challenge(realm: "https://id.example.com")
                == "Bearer realm=\"https://id.example.com\"")
        #expect(
            BearerToken.challenge(realm: "r", error: BearerToken.invalidToken("The token expired."))
                == "Bearer realm=\"r\", error=\"invalid_token\", error_description=\"The access token is invalid, expired or revoked. The token expired.\""
        )
        let insufficient = BearerToken.insufficientScope()
        #expect(insufficient.status == 403)
        #expect(
            BearerToken.challenge(realm: "r\"x", error: insufficient, scope: "openid")
                == "Bearer realm=\"rx\", error=\"insufficient_scope\", error_description=\"The access token does not carry the required scope.\", scope=\"openid\""
        )
        #expect(BearerToken.invalidToken().status == 401)
    }
}

@Suite struct UserInfoTests {
    static let available: [String: JSONValue] = [
        "name": .string("Alice Example"), "preferred_username": .string("alice"),
        "updated_at": .int(1_700_000_000),
        "email": .string("alice@example.com"), "email_verified": .bool(true), "phone_number": .string("+81"),
        "locale": .null, "sub": .string("spoofed"),
    ]

    @Test(arguments: [
        (["openid"], ["sub"]),
        (["openid", "profile"], ["sub", "name", "preferred_username", "updated_at"]),
        (["openid", "email"], ["sub", "email", "email_verified"]),
        (
            ["openid", "profile", "email", "offline_access"],
            ["sub", "name", "preferred_username", "updated_at", "email", "email_verified"]
        ),
    ])
    func selection(scopes: [String], expected: [String]) {
        let claims = UserInfoClaims.select(subject: "acct-1", available: Self.available, scopes: scopes)
        #expect(Set(claims.keys) == Set(expected))
        #expect(claims["sub"] == .string("acct-1"))
    }

    /// Core §5.5: claims the `userinfo` member requested are released without their scope.
    @Test func requestedClaimsWithoutTheirScope() {
        let claims = UserInfoClaims.select(
            subject: "acct-1", available: Self.available, scopes: ["openid"], requested: ["name", "email"])
        #expect(Set(claims.keys) == ["sub", "name", "email"])
    }

    @Test func body() {
        let claims = UserInfoClaims.select(
            subject: "acct-1", available: Self.available, scopes: ["openid", "email"])
        #expect(
            String(decoding: UserInfoClaims.jsonBody(claims), as: UTF8.self)
                == #"{"email":"alice@example.com","email_verified":true,"sub":"acct-1"}"#)
    }
}

@Suite struct RevocationAndIntrospectionTests {
    @Test func revocation() throws {
        #expect(
            try RevocationRequest.parse(
                Fixture.params([("token", "t"), ("token_type_hint", "refresh_token")]))
                == RevocationRequest(token: "t", tokenTypeHint: .refreshToken))
        // Unknown hints are ignored (RFC 7009 §2.1).
        #expect(
            try RevocationRequest.parse(Fixture.params([("token", "t"), ("token_type_hint", "id_token")]))
                == RevocationRequest(token: "t", tokenTypeHint: nil))
        #expect(throws: OAuthError(.invalidRequest, hint: "The 'token' parameter is missing.")) {
            try RevocationRequest.parse(Fixture.params([("token_type_hint", "access_token")]))
        }
        #expect(throws: OAuthError(.invalidRequest, hint: "The 'token' parameter is duplicated.")) {
            try RevocationRequest.parse(Fixture.params([("token", "a"), ("token", "b")]))
        }
    }

    @Test func introspection() throws {
        #expect(
            try IntrospectionRequest.parse(
                Fixture.params([("token", "t"), ("token_type_hint", "access_token")]))
                == IntrospectionRequest(token: "t", tokenTypeHint: .accessToken))
        #expect(throws: OAuthError(.invalidRequest, hint: "The 'token_type_hint' parameter is duplicated.")) {
            try IntrospectionRequest.parse(
                Fixture.params([("token", "a"), ("token_type_hint", "a"), ("token_type_hint", "b")]))
        }
        #expect(
            String(decoding: IntrospectionResponse.inactive.jsonBody, as: UTF8.self) == #"{"active":false}"#)
    }

    @Test func introspectionIsOnlyForClientsThatAuthenticate() throws {
        let confidential = AuthenticatedClient(client: Fixture.web, method: .clientSecretBasic)
        #expect(
            try IntrospectionRequest.parse(Fixture.params([("token", "t")]), from: confidential)
                == IntrospectionRequest(token: "t", tokenTypeHint: nil))
        let publicClient = AuthenticatedClient(client: Fixture.native, method: .none)
        let refused = OAuthError(.invalidClient, hint: "Introspection is only for clients that authenticate.")
        #expect(throws: refused) {
            try IntrospectionRequest.parse(Fixture.params([("token", "t")]), from: publicClient)
        }
        // Authentication is checked first: a public client learns nothing about its request.
        #expect(throws: refused) { try IntrospectionRequest.parse(Fixture.params([]), from: publicClient) }
    }

    @Test func introspectionResponse() throws {
        let active = IntrospectionResponse.active(
            .init(
                scope: ["openid", "email"], clientID: "native-app", tokenType: "Bearer",
                expiresAt: Date(timeIntervalSince1970: 1_800_000_600),
                issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
                subject: "acct-1", audience: [Fixture.issuer], issuer: Fixture.issuer, jwtID: "j"))
        #expect(
            String(decoding: active.jsonBody, as: UTF8.self)
                == #"{"active":true,"aud":"https://id.example.com","client_id":"native-app","exp":1800000600,"iat":1800000000,"iss":"https://id.example.com","jti":"j","scope":"openid email","sub":"acct-1","token_type":"Bearer"}"#
        )
    }
}
