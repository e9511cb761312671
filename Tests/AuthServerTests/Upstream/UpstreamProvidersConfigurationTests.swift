import Crypto
import Foundation
import Testing

@testable import AuthServer

@Suite struct UpstreamProvidersConfigurationTests {
    static func configuration(_ providers: String) -> ConfigurationLoader.Result {
        ConfigurationLoader.check(
            data: Data(
                """
                {"issuer": "https://id.example.com", "clients": [], "upstream_providers": \(providers)}
                """.utf8))
    }

    static func keyFile() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey_\(UUID()).p8").path
        try Data(try P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func readsAppleAndAnOIDCProviderInOrder() throws {
        let key = try Self.keyFile()
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID())").path
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: secret))
        defer {
            try? FileManager.default.removeItem(atPath: key)
            try? FileManager.default.removeItem(atPath: secret)
        }
        let result = Self.configuration(
            """
            [{"id": "corp", "type": "oidc", "label": "Example Corp", "issuer": "https://sso.example.com",
              "client_id": "id-server", "client_secret_file": "\(secret)", "scopes": ["email"],
              "icon_url": "/static/img/corp.svg"},
             {"id": "apple", "type": "apple", "team_id": "TEAM123456", "services_id": "com.example.web",
              "bundle_ids": ["com.example.app"], "key_id": "KEY1234567", "private_key_file": "\(key)"}]
            """)
        #expect(result.problems.isEmpty, "\(result.problems)")
        let providers = try #require(result.configuration).upstreamProviders
        #expect(providers.map(\.id) == ["corp", "apple"])
        #expect(providers[0].iconURL == "/static/img/corp.svg")
        guard case .oidc(let oidc) = providers[0].kind else { Issue.record("not oidc"); return }
        #expect(oidc.clientSecret == "s3cret" && oidc.scopes == ["openid", "email"])
        let apple = try #require(providers[1].apple)
        #expect(providers[1].issuer == "https://appleid.apple.com" && providers[1].label == "Apple")
        #expect(
            apple.endpoints == UpstreamProvider.AppleEndpoints() && apple.bundleIDs == ["com.example.app"])
    }

    @Test func mistakesAreReported() throws {
        let key = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: key) }
        let apple =
            #"{"id": "apple", "type": "apple", "team_id": "T", "services_id": "s", "key_id": "K", "private_key_file": "\#(key)""#
        let cases: [(String, String)] = [
            // Apple's endpoints can be replaced only by a test stand-in on loopback.
            (
                #"[\#(apple), "endpoints_for_tests": {"token": "https://evil.example/t"}}]"#,
                "endpoints_for_tests"
            ),
            (
                #"[\#(apple)}, \#(apple.replacingOccurrences(of: "\"apple\", \"type\"", with: "\"apple2\", \"type\""))}]"#,
                "only one apple provider"
            ),
            (
                #"[{"id": "Bad Id", "type": "oidc", "label": "x", "issuer": "https://a.example", "client_id": "c"}]"#,
                "$.upstream_providers[0].id"
            ),
            (#"[{"id": "corp", "type": "oidc", "issuer": "https://a.example", "client_id": "c"}]"#, "label"),
            (
                #"[{"id": "corp", "type": "oidc", "label": "x", "issuer": "http://a.example", "client_id": "c"}]"#,
                "issuer"
            ),
            (#"[{"id": "corp", "type": "saml", "label": "x"}]"#, "type"),
            // The pages' CSP shows images of this server only: an icon elsewhere would never load.
            (
                #"[{"id": "corp", "type": "oidc", "label": "x", "issuer": "https://a.example", "client_id": "c", "icon_url": "https://cdn.example/corp.png"}]"#,
                "icon_url"
            ),
            (
                #"[{"id": "corp", "type": "oidc", "label": "x", "issuer": "https://a.example", "client_id": "c", "icon_url": "//cdn.example/corp.png"}]"#,
                "icon_url"
            ),
            (
                #"[{"id": "apple", "type": "apple", "team_id": "T", "key_id": "K", "private_key_file": "/nonexistent"}]"#,
                "cannot read"
            ),
            (
                #"[{"id": "corp", "type": "oidc", "label": "x", "issuer": "https://a.example", "client_id": "c", "secret": "x"}]"#,
                "not a known setting"
            ),
            (
                #"[{"id": "corp", "type": "oidc", "label": "x", "issuer": "https://a.example", "client_id": "c", "key_id": "k"}]"#,
                "only used with private_key_file"
            ),
            (
                #"[{"id": "corp", "type": "oidc", "label": "x", "issuer": "https://a.example", "client_id": "c", "client_secret_file": "\#(key)", "private_key_file": "\#(key)"}]"#,
                "not both"
            ),
        ]
        for (providers, expected) in cases {
            let result = Self.configuration(providers)
            #expect(result.configuration == nil, "\(providers)")
            #expect(
                result.problems.contains { $0.description.contains(expected) },
                "\(expected): \(result.problems)")
        }
    }
}
