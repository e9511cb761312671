import Foundation
import OIDC
import Testing

@testable import AuthServer

@Suite struct ResourcesConfigurationTests {
    static let hash = ClientSecret.hash("an-api-secret-with-plenty-of-entropy-0123456789")

    static func config(_ resources: String) -> String {
        """
        {"issuer": "https://id.example.com", "clients": [
          {"client_id": "web", "redirect_uris": ["https://app.example.com/cb"], "client_secret_hash": "\(hash)"}
        ], "resources": \(resources)}
        """
    }

    static let orders = """
        {"identifier": "https://api.example.com/orders", "name": "Orders",
         "scopes": [{"name": "orders:read", "description": "See your orders", "description_ja": "注文の閲覧"}],
         "access_token": {"format": "opaque", "lifetime_seconds": 120},
         "allowed_clients": ["web"], "token_claims": ["roles", "groups"],
         "introspection": {"client_id": "orders-api", "client_secret_hash": "\(hash)"}}
        """

    func problems(_ resources: String) -> [String] {
        ConfigurationLoader.check(data: Data(Self.config(resources).utf8)).problems.map(\.description)
    }

    @Test func aCompleteAPIIsRead() throws {
        let result = ConfigurationLoader.check(data: Data(Self.config("[\(Self.orders)]").utf8))
        #expect(result.problems.isEmpty)
        let api = try #require(result.configuration?.resources.first)
        #expect(api.identifier == "https://api.example.com/orders")
        #expect(
            api.scopes == [.init(name: "orders:read", description: "See your orders", descriptionJa: "注文の閲覧")]
        )
        #expect(api.tokenFormat == .opaque && api.tokenLifetimeSeconds == 120)
        #expect(api.allowedClients == ["web"] && api.tokenClaims == [.roles, .groups])
        #expect(api.introspection == .init(clientID: "orders-api", clientSecretHash: Self.hash))
    }

    @Test func defaultsAreAJWTForTenMinutesForNoClient() throws {
        let result = ConfigurationLoader.check(
            data: Data(Self.config(#"[{"identifier": "urn:example:api", "name": "API"}]"#).utf8))
        let api = try #require(result.configuration?.resources.first)
        #expect(api.tokenFormat == .jwt && api.tokenLifetimeSeconds == 600 && api.allowedClients.isEmpty)
    }

    @Test(arguments: [
        (#"[{"identifier": "https://api.example.com/#x", "name": "A"}]"#, "$.resources[0].identifier"),
        (#"[{"identifier": "api", "name": "A"}]"#, "$.resources[0].identifier"),
        (#"[{"name": "A"}]"#, "$.resources[0].identifier"),
        (
            #"[{"identifier": "urn:a", "name": "A", "allowed_clients": ["nobody"]}]"#,
            "$.resources[0].allowed_clients[0]"
        ),
        (
            #"[{"identifier": "urn:a", "name": "A", "scopes": [{"name": "openid", "description": "x"}]}]"#,
            "$.resources[0].scopes[0].name"
        ),
        (
            #"[{"identifier": "urn:a", "name": "A", "scopes": [{"name": "a b", "description": "x"}]}]"#,
            "$.resources[0].scopes[0].name"
        ),
        (
            #"[{"identifier": "urn:a", "name": "A", "token_claims": ["email"]}]"#,
            "$.resources[0].token_claims[0]"
        ),
        (
            #"[{"identifier": "urn:a", "name": "A", "access_token": {"format": "paseto"}}]"#,
            "$.resources[0].access_token.format"
        ),
        (
            #"[{"identifier": "urn:a", "name": "A", "access_token": {"lifetime_seconds": 1}}]"#,
            "$.resources[0].access_token.lifetime_seconds"
        ),
        (
            #"[{"identifier": "urn:a", "name": "A", "introspection": {"client_id": "web", "client_secret_hash": "\#(ClientSecretFixture.wellFormed)"}}]"#,
            "$.resources[0].introspection.client_id"
        ),
        (
            #"[{"identifier": "urn:a", "name": "A", "introspection": {"client_id": "a", "client_secret_hash": "$hmac-sha256$plain"}}]"#,
            "$.resources[0].introspection.client_secret_hash"
        ),
        (
            #"[{"identifier": "urn:a", "name": "A", "introspection": {"client_id": "a", "client_secret": "plain"}}]"#,
            "$.resources[0].introspection.client_secret"
        ),
        (#"[{"identifier": "urn:a", "name": "A", "audience": "x"}]"#, "$.resources[0].audience"),
        (#"{"identifier": "urn:a"}"#, "resources"),
    ])
    func mistakesAreReportedWithTheirPath(resources: String, path: String) {
        let found = problems(resources)
        #expect(found.contains { $0.contains(path) }, "\(found)")
    }

    @Test func identifiersScopesAndIntrospectionIDsAreUnique() {
        let found = problems(
            """
            [{"identifier": "urn:a", "name": "A", "scopes": [{"name": "read", "description": "x"}],
              "introspection": {"client_id": "rs", "client_secret_hash": "\(Self.hash)"}},
             {"identifier": "urn:a", "name": "B", "scopes": [{"name": "read", "description": "y"}],
              "introspection": {"client_id": "rs", "client_secret_hash": "\(Self.hash)"}}]
            """)
        #expect(found.contains { $0.contains("$.resources[1].identifier") })
        #expect(found.contains { $0.contains("$.resources[1].scopes") })
        #expect(found.contains { $0.contains("$.resources[1].introspection") })
    }

    @Test func reloadSwapsTheAPIsWithTheClientsAndNeedsNoRestart() throws {
        let base = try #require(ConfigurationLoader.check(data: Data(Self.config("[]").utf8)).configuration)
        let clients = ReloadableClients(base)
        #expect(clients.current.resources.resources.isEmpty)
        let changed = try #require(
            ConfigurationLoader.check(data: Data(Self.config("[\(Self.orders)]").utf8)).configuration)
        #expect(ConfigurationReload.changedSettings(base, changed).isEmpty)
        clients.replace(clientsOf: changed)
        #expect(clients.current.resources.resource("https://api.example.com/orders")?.name == "Orders")
    }
}
