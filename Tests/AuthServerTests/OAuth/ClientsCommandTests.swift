import Foundation
import OIDC
import Testing

@testable import AuthServer

@Suite("auth-server clients and the native-app config checks")
struct ClientsCommandTests {
    @Test func hashSecretHashesTheSecretFromStandardInput() throws {
        let secret = "a-client-secret-of-more-than-thirty-two-characters"
        let result = try Executable.run(["clients", "hash-secret"], input: secret + "\n")
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "client_secret: \(secret)")
        let hash = try #require(lines.last?.split(separator: " ").last.map(String.init))
        #expect(hash.hasPrefix("$hmac-sha256$"))
        #expect(ClientSecret.verify(secret, against: hash))
    }

    @Test func hashSecretGeneratesASecretWhenAskedOrGivenNothing() throws {
        for (args, input) in [
            (["clients", "hash-secret", "--generate"], "ignored\n"), (["clients", "hash-secret"], ""),
        ] {
            let result = try Executable.run(args, input: input)
            #expect(result.status == 0)
            let lines = result.output.split(separator: "\n").map(String.init)
            let secret = try #require(lines.first?.split(separator: " ").last.map(String.init))
            #expect(secret.count == 43)
            let hash = try #require(lines.last?.split(separator: " ").last.map(String.init))
            #expect(ClientSecret.verify(secret, against: hash))
        }
    }

    @Test func hashSecretRefusesShortSecrets() throws {
        let result = try Executable.run(["clients", "hash-secret"], input: "hunter2\n")
        #expect(result.status == 1)
        #expect(result.error.contains("at least 32"))
        #expect(!result.output.contains("hunter2"))
    }

    @Test func clientsHelpAndCheck() throws {
        let help = try Executable.run(["clients", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("hash-secret"))
        let check = try Executable.run(["clients", "check", "--config", "config/example.json"])
        #expect(check.status == 0, "\(check.error)")
        #expect(check.output.contains("demo-ios: native, none (public)"))
        #expect(check.output.contains("universal link paths: /app/callback"))
        #expect(try Executable.run(["clients", "check"]).status == 2)
    }

    @Test func configCheckWarnsAboutHTTPSCallbacksWithoutAnAssociation() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "native-\(UUID().uuidString).json")
        try Data(
            #"""
            {"issuer": "https://id.example.com", "clients": [
              {"client_id": "ios", "application_type": "native", "token_endpoint_auth_method": "none",
               "redirect_uris": ["https://app.example.net/callback", "https://id.example.com/cb"],
               "first_party": true, "apple_app_ids": ["ABCDE12345.com.example.app"]},
              {"client_id": "bare", "application_type": "native", "token_endpoint_auth_method": "none",
               "redirect_uris": ["https://id.example.com/bare"]}
            ], "mail": {"transport": "smtp", "smtp": {"host": "smtp.example.com"}}}
            """#.utf8
        ).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Executable.run(["config", "check", file.path])
        #expect(result.status == 0)
        #expect(
            result.output.contains(
                "warning: $.clients[0].redirect_uris[0]: is on app.example.net, which this server publishes no app association for"
            ))
        #expect(!result.output.contains("$.clients[0].redirect_uris[1]"))
        #expect(
            result.output.contains(
                "warning: $.clients[1].redirect_uris[0]: is on the issuer's host but the client names no apple_app_ids or android_apps"
            ))
    }

    @Test func relatedOriginsAreReadAndValidated() throws {
        let good = ConfigurationLoader.check(
            data: Data(
                #"{"issuer": "https://id.example.com", "clients": [], "webauthn": {"related_origins": ["https://shop.example"]}}"#
                    .utf8))
        #expect(good.configuration?.webAuthn.relatedOrigins == ["https://shop.example"])
        let bad = ConfigurationLoader.check(
            data: Data(
                #"{"issuer": "https://id.example.com", "clients": [], "webauthn": {"related_origins": ["http://shop.example/x"]}}"#
                    .utf8))
        #expect(bad.configuration == nil)
        #expect(bad.problems.first?.path == "$.webauthn.related_origins[0]")
    }

    @Test func oauthLifetimesAreConfigurable() throws {
        let result = ConfigurationLoader.check(
            data: Data(
                #"{"issuer": "https://id.example.com", "clients": [], "oauth": {"access_token_lifetime_seconds": 120, "refresh_token_idle_seconds": 3600}}"#
                    .utf8))
        #expect(result.configuration?.oauth.accessTokenLifetimeSeconds == 120)
        #expect(result.configuration?.oauth.refreshTokenIdleSeconds == 3600)
        #expect(result.configuration?.oauth.authorizationCodeLifetimeSeconds == 60)
    }
}
