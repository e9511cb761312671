import Crypto
import Foundation
import Testing
@testable import OIDC

@Suite struct ClientAuthenticationTests {
    static let basicHeader = "Basic " + Data("web-app:s3cr3t".utf8).base64EncodedString()
    static let invalidRequest = OAuthErrorCode.invalidRequest.fixedDescription + " "
    static let invalidClient = OAuthErrorCode.invalidClient.fixedDescription + " "

    static func extract(_ header: String?, _ body: [(String, String)]) throws(OAuthError)
        -> PresentedClientCredentials
    {
        try ClientAuthentication.extract(authorization: header, parameters: Fixture.params(body))
    }

    static func authenticate(
        _ credentials: PresentedClientCredentials, client: OAuthClient? = nil
    ) throws(OAuthError) -> AuthenticatedClient {
        try ClientAuthentication.authenticate(
            credentials, client: client ?? Fixture.clients(credentials.clientID),
            audiences: [Fixture.tokenEndpoint, Fixture.issuer], now: Fixture.now)
    }

    @Test func basicWithEncodedIDAndSecret() throws {
        // RFC 6749 §2.3.1: form-encode id and secret, then join with ':' and base64.
        let header = "Basic bXklM0FjbGllbnQ6cCU0MHNzJTNBdyUyNXJk"  // my%3Aclient:p%40ss%3Aw%25rd
        #expect(try Self.extract(header, []) == .basic(clientID: "my:client", secret: "p@ss:w%rd"))
        let plus = "Basic " + Data("a+b:c+d%2B".utf8).base64EncodedString()
        #expect(try Self.extract(plus, []) == .basic(clientID: "a b", secret: "c d+"))
        #expect(
            try Self.extract("basic " + Data("id:".utf8).base64EncodedString(), [])
                == .basic(clientID: "id", secret: ""))

        var client = Fixture.web
        client.clientID = "my:client"
        client.clientSecretHash = ClientSecret.hash("p@ss:w%rd")
        let authenticated = try Self.authenticate(try Self.extract(header, []), client: client)
        #expect(authenticated.method == .clientSecretBasic && authenticated.client.clientID == "my:client")
    }

    @Test(arguments: [
        "Basic", "Basic !!!", "Basic " + Data("no-colon".utf8).base64EncodedString(),
        "Basic " + Data(":secret".utf8).base64EncodedString(),
        "Basic " + Data("id%zz:secret".utf8).base64EncodedString(),
    ])
    func malformedBasic(header: String) {
        #expect(
            throws: OAuthError(
                .invalidClient, hint: "The HTTP Basic credentials are malformed.",
                wwwAuthenticate: ClientAuthentication.basicChallenge)
        ) { try Self.extract(header, []) }
    }

    @Test func extraction() throws {
        #expect(
            try Self.extract(nil, [("client_id", "web-app"), ("client_secret", "s3cr3t")])
                == .post(clientID: "web-app", secret: "s3cr3t"))
        #expect(try Self.extract(nil, [("client_id", "native-app")]) == .none(clientID: "native-app"))
        #expect(
            try Self.extract("Bearer abc", [("client_id", "native-app")]) == .none(clientID: "native-app"))
        #expect(
            try Self.extract(Self.basicHeader, [("client_id", "web-app")])
                == .basic(clientID: "web-app", secret: "s3cr3t"))
    }

    @Test(
        arguments: [
            (
                basicHeader, [("client_secret", "s3cr3t"), ("client_id", "web-app")],
                OAuthErrorCode.invalidRequest,
                "Use exactly one client authentication method."
            ),
            (
                nil,
                [
                    ("client_id", "web-app"), ("client_secret", "x"),
                    ("client_assertion_type", ClientAuthentication.jwtBearerAssertionType),
                    ("client_assertion", "a.b.c"),
                ], .invalidRequest, "Use exactly one client authentication method."
            ),
            (
                basicHeader, [("client_id", "other")], .invalidRequest,
                "The 'client_id' parameter does not match the authenticated client."
            ),
            (nil, [("client_secret", "s3cr3t")], .invalidRequest, "The 'client_id' parameter is missing."),
            (
                nil, [("client_id", "a"), ("client_id", "a")], .invalidRequest,
                "The 'client_id' parameter is duplicated."
            ),
            (
                nil, [("client_id", "a"), ("client_secret", "x"), ("client_secret", "y")], .invalidRequest,
                "The 'client_secret' parameter is duplicated."
            ),
            (nil, [], .invalidClient, "The client did not identify itself."),
            (
                nil, [("client_assertion_type", "urn:other"), ("client_assertion", "a.b.c")], .invalidClient,
                "The 'client_assertion_type' is not supported."
            ),
            (
                nil, [("client_assertion_type", ClientAuthentication.jwtBearerAssertionType)],
                .invalidRequest,
                "The 'client_assertion' parameter is missing."
            ),
            (
                nil,
                [
                    ("client_assertion_type", ClientAuthentication.jwtBearerAssertionType),
                    ("client_assertion", "not-a-jwt"),
                ],
                .invalidClient, "The client assertion is malformed."
            ),
        ] as [(String?, [(String, String)], OAuthErrorCode, String)])
    func extractionErrors(header: String?, body: [(String, String)], code: OAuthErrorCode, hint: String)
        throws
    {
        let error = try #require(throws: OAuthError.self) { try Self.extract(header, body) }
        #expect(error.error == code.rawValue)
        #expect(error.errorDescription == code.fixedDescription + " " + hint)
        #expect(error.status == (code == .invalidClient ? 401 : 400))
    }

    @Test func secretMethods() throws {
        #expect(
            try Self.authenticate(.basic(clientID: "web-app", secret: "s3cr3t")).method == .clientSecretBasic)
        #expect(
            try Self.authenticate(.post(clientID: "legacy-web", secret: "s3cr3t")).method == .clientSecretPost
        )
        #expect(try Self.authenticate(.none(clientID: "native-app")).method == .none)
    }

    @Test(arguments: [
        (
            PresentedClientCredentials.basic(clientID: "web-app", secret: "wrong"),
            "The client is unknown or its credentials are wrong.", true
        ),
        (
            .basic(clientID: "nobody", secret: "s3cr3t"),
            "The client is unknown or its credentials are wrong.", true
        ),
        (
            .post(clientID: "web-app", secret: "s3cr3t"),
            "The client must authenticate with its registered method.", false
        ),
        (
            .basic(clientID: "legacy-web", secret: "s3cr3t"),
            "The client must authenticate with its registered method.", true
        ),
        (
            .post(clientID: "native-app", secret: "anything"),
            "The client must authenticate with its registered method.", false
        ),
        (
            .basic(clientID: "native-app", secret: "anything"),
            "The client must authenticate with its registered method.", true
        ),
        (.none(clientID: "web-app"), "The client must authenticate with its registered method.", false),
        (.none(clientID: "nobody"), "The client is unknown or its credentials are wrong.", false),
    ])
    func authenticationErrors(credentials: PresentedClientCredentials, hint: String, basic: Bool) throws {
        let error = try #require(throws: OAuthError.self) { try Self.authenticate(credentials) }
        #expect(error.error == "invalid_client")
        #expect(error.errorDescription == Self.invalidClient + hint)
        #expect(error.status == 401)
        #expect(error.wwwAuthenticate == (basic ? "Basic realm=\"oauth\", charset=\"UTF-8\"" : nil))
        #expect(
            error.jsonBody
                == Array(
                    "{\"error\":\"invalid_client\",\"error_description\":\"\(error.errorDescription)\"}".utf8)
        )
    }
}

@Suite struct PrivateKeyJWTTests {
    static let key = try! Vectors.ecJWK.privateKey()
    static let client: OAuthClient = {
        var client = Fixture.web
        client.clientID = "jwt-client"
        client.tokenEndpointAuthMethod = .privateKeyJWT
        client.clientSecretHash = nil
        client.jwks = JWKS(keys: [try! JWK(publicKey: key.publicKey, keyID: "k1")])
        return client
    }()

    static func assertion(
        _ overrides: [String: JSONValue?] = [:], key: SigningPrivateKey = key, keyID: String = "k1",
        algorithm: JWSAlgorithm = .ES256
    ) throws -> String {
        var claims: [String: JSONValue] = [
            "iss": .string("jwt-client"), "sub": .string("jwt-client"), "aud": .string(Fixture.tokenEndpoint),
            "exp": .int(Int(Fixture.now.timeIntervalSince1970) + 120),
            "iat": .int(Int(Fixture.now.timeIntervalSince1970)),
            "jti": .string("jti-123"),
        ]
        for (name, value) in overrides { claims[name] = value }
        let signer = try JWSSigner(privateKey: key, algorithm: algorithm, keyID: keyID)
        return try signer.sign(payload: JSONBody.encode(claims), type: "JWT")
    }

    static func authenticate(_ jwt: String) throws(OAuthError) -> AuthenticatedClient {
        let credentials = try ClientAuthentication.extract(
            authorization: nil,
            parameters: Fixture.params([
                ("client_assertion_type", ClientAuthentication.jwtBearerAssertionType),
                ("client_assertion", jwt),
            ]))
        return try ClientAuthentication.authenticate(
            credentials, client: credentials.clientID == "jwt-client" ? client : nil,
            audiences: DiscoveryDocument(issuer: Fixture.issuer).clientAssertionAudiences, now: Fixture.now)
    }

    @Test func good() throws {
        let result = try Self.authenticate(try Self.assertion())
        #expect(result.method == .privateKeyJWT)
        #expect(result.assertionID == "jti-123")
        #expect(result.assertionExpiresAt == Fixture.now.addingTimeInterval(120))
        // The issuer is an accepted audience too, also inside an array.
        _ = try Self.authenticate(
            try Self.assertion(["aud": .array([.string("x"), .string(Fixture.issuer)])]))
        // client_id in the body may repeat the assertion's subject.
        let credentials = try ClientAuthentication.extract(
            authorization: nil,
            parameters: Fixture.params([
                ("client_id", "jwt-client"),
                ("client_assertion_type", ClientAuthentication.jwtBearerAssertionType),
                ("client_assertion", try Self.assertion()),
            ]))
        #expect(credentials.clientID == "jwt-client")
    }

    static let now = Int(Fixture.now.timeIntervalSince1970)

    @Test(
        arguments: [
            ("expired", ["exp": JSONValue.int(now - 61)]),
            ("no exp", ["exp": nil]),
            ("exp too far ahead", ["exp": .int(now + 3600)]),
            ("wrong aud", ["aud": .string("https://other.example/token")]),
            ("no aud", ["aud": nil]),
            ("iss differs", ["iss": .string("someone-else")]),
            ("sub differs", ["sub": .string("someone-else"), "iss": .string("jwt-client")]),
            ("no jti", ["jti": nil]),
            ("iat in the future", ["iat": .int(now + 3600)]),
        ] as [(String, [String: JSONValue?])])
    func refusedClaims(name: String, overrides: [String: JSONValue?]) throws {
        let jwt = try Self.assertion(overrides)
        let error = try #require(throws: OAuthError.self) { try Self.authenticate(jwt) }
        if name == "sub differs" {
            // The subject names the client to look up: an unknown one.
            #expect(error.hint == "The client is unknown or its credentials are wrong.")
        } else {
            #expect(error.hint == "The client assertion is invalid.")
        }
        #expect(error.error == "invalid_client" && error.status == 401 && error.wwwAuthenticate == nil)
    }

    @Test func wrongKeyAndAlgNone() throws {
        let other = SigningPrivateKey.p256(try P256.Signing.PrivateKey())
        for jwt in [
            try Self.assertion(key: other),
            try Self.assertion(key: other, keyID: "unknown"),
            "eyJhbGciOiJub25lIn0."
                + Base64URL.encode(
                    JSONBody.encode([
                        "iss": .string("jwt-client"), "sub": .string("jwt-client"),
                        "aud": .string(Fixture.tokenEndpoint), "exp": .int(Self.now + 60),
                        "jti": .string("j"),
                    ])) + ".",
        ] {
            let error = try #require(throws: OAuthError.self) { try Self.authenticate(jwt) }
            #expect(error == OAuthError(.invalidClient, hint: "The client assertion is invalid."))
        }
    }

    @Test func clientWithoutKeys() throws {
        var client = Self.client
        client.jwks = nil
        let jwt = try Self.assertion()
        #expect(throws: OAuthError(.invalidClient, hint: "The client has no registered keys.")) {
            try ClientAuthentication.authenticate(
                .assertion(clientID: "jwt-client", jwt: jwt), client: client,
                audiences: [Fixture.issuer], now: Fixture.now)
        }
    }

    /// FAPI 2.0 Security Profile §5.4.1: a fapi2 client's assertion uses PS256, ES256 or EdDSA,
    /// as its request objects do; RS256 (PKCS#1 v1.5) is refused.
    @Test func aFAPI2ClientsAssertionIsNotRS256() throws {
        let key = SigningPrivateKey.rsa(try RSA.Signing.PrivateKey(keySize: 2048))
        var client = Self.client
        client.profile = .fapi2
        client.jwks = JWKS(keys: [try JWK(publicKey: key.publicKey, keyID: "r1")])
        func authenticate(_ algorithm: JWSAlgorithm) throws(OAuthError) -> AuthenticatedClient {
            try ClientAuthentication.authenticate(
                .assertion(
                    clientID: "jwt-client",
                    jwt: try! Self.assertion(["aud": .string(Fixture.issuer)], key: key, keyID: "r1", algorithm: algorithm)),
                client: client, audiences: [Fixture.issuer], now: Fixture.now)
        }
        #expect(try authenticate(.PS256).method == .privateKeyJWT)
        #expect(throws: OAuthError(.invalidClient, hint: "The client assertion is invalid.")) {
            try authenticate(.RS256)
        }
        client.profile = .standard
        #expect(try ClientAuthentication.authenticate(
            .assertion(
                clientID: "jwt-client",
                jwt: try Self.assertion(["aud": .string(Fixture.issuer)], key: key, keyID: "r1", algorithm: .RS256)),
            client: client, audiences: [Fixture.issuer], now: Fixture.now).method == .privateKeyJWT)
    }
}
