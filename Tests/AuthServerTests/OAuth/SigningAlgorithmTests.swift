import Foundation
import OIDC
import Testing

@testable import AuthServer

/// Every documented `id_token_signed_response_alg` works out of the box: the server creates
/// the keys a client needs at start-up and on clients reload, and never answers /token with
/// a 500 for a key it could have created.
@Suite("OAuth: ID token signing algorithms")
struct SigningAlgorithmTests {
    @Test(arguments: [JWSAlgorithm.PS256, .EdDSA])
    func aClientsIDTokenAlgorithmWorksWithoutCreatingKeysByHand(_ algorithm: JWSAlgorithm) throws {
        let app = try OAuthFixtures.app { configuration in
            configuration.clients[0].idTokenSignedResponseAlg = algorithm.rawValue
        }
        let discovery = try TestAgent(app).send("GET", "/.well-known/openid-configuration")
        let advertised = try #require(discovery.json["id_token_signing_alg_values_supported"] as? [String])
        #expect(advertised.contains(algorithm.rawValue))
        #expect(advertised.contains("RS256") && advertised.contains("ES256"))

        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        let reply = try app.redeem(code, attempt)
        #expect(reply.status == 200, "token: \(reply.text)")
        let idToken = try #require(TokenSet(json: reply.json).idToken)

        // Verified with the published JWKS, as a client would.
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(try app.client.get("/jwks").body))
        let verified = try JWSVerifier(keys: jwks, allowedAlgorithms: [algorithm]).verify(
            idToken, expectedType: "JWT")
        #expect(verified.header.algorithm == algorithm)
        #expect(verified.key.alg == algorithm.rawValue)
    }

    @Test func clientsReloadCreatesTheKeysOfANewClientsAlgorithm() throws {
        let app = try OAuthFixtures.app()
        #expect(throws: SigningKeyRing.KeyRingError.self) { _ = try app.signingKeys.signer(for: .EdDSA) }

        let directory = URL(fileURLWithPath: "/tmp/auth-keys-reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("config.json")
        let client = #"""
            {"client_id": "ed-app", "redirect_uris": ["https://ed.example/cb"],
             "client_secret_hash": "\#(ClientSecret.hash(OAuthFixtures.webSecret))",
             "id_token_signed_response_alg": "EdDSA"}
            """#
        try Data(
            ClientsReloadTests.config(
                port: 8080, directory: directory, database: try #require(app.configuration.databaseURL),
                clients: [client]
            ).utf8
        ).write(to: file)
        let clients = ReloadableClients(app.configuration)
        let outcome = ConfigurationReload.reload(
            path: file.path, running: app.configuration, clients: clients, pool: app.database.pool,
            log: Log(write: { _ in }), signingKeys: app.signingKeys,
            environment: [ConfigurationLoader.keyEncryptionKeyVariable: TestApplication.keyEncryptionKey])
        guard case .reloaded(clients: 1, _) = outcome else {
            Issue.record("reload refused: \(outcome)")
            return
        }
        #expect(try app.signingKeys.signer(for: .EdDSA).algorithm == .EdDSA)
        let discovery = try TestAgent(app).send("GET", "/.well-known/openid-configuration")
        #expect(
            (discovery.json["id_token_signing_alg_values_supported"] as? [String])?.contains("EdDSA") == true)
    }

    @Test(arguments: ["HS256", "none", "ES512"])
    func configCheckRefusesAnAlgorithmWithoutSupport(_ name: String) {
        let result = ConfigurationLoader.check(
            data: Data(
                #"{"issuer": "https://id.example.com", "clients": [{"client_id": "x", "redirect_uris": ["https://x.example/cb"], "client_secret_hash": "\#(ClientSecret.hash(OAuthFixtures.webSecret))", "id_token_signed_response_alg": "\#(name)"}]}"#
                    .utf8))
        #expect(result.configuration == nil)
        #expect(
            result.problems.map(\.description).contains(
                "error: $.clients[0].id_token_signed_response_alg: must be one of ES256, EdDSA, PS256, RS256")
        )
    }
}
