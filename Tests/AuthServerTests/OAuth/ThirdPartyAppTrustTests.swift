import Foundation
import Testing

@testable import AuthServer

/// An app named in `apple_app_ids` or `android_apps` can run passkey sign-ins for this
/// server's RP ID (and on iOS read the site's saved passwords): only the operator's own,
/// first-party clients may name apps.
@Suite struct ThirdPartyAppTrustTests {
    static let fingerprint =
        "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    static func config(firstParty: Bool?, apps: String, issuer: String = "https://id.example.com") -> String {
        let flag = firstParty.map { #""first_party": \#($0), "# } ?? ""
        return """
            {"issuer": "\(issuer)", "clients": [
              {"client_id": "other-app", "application_type": "native", "token_endpoint_auth_method": "none",
               \(flag)"redirect_uris": ["com.other.app:/cb"], \(apps)}
            ]}
            """
    }

    static let android =
        #""android_apps": [{"package_name": "com.other.app", "sha256_cert_fingerprints": ["\#(fingerprint)"]}]"#
    static let apple = #""apple_app_ids": ["ABCDE12345.com.other.app"]"#

    @Test(arguments: [nil, false])
    func aThirdPartyClientCannotMakeItsAndroidAppAPasskeyOrigin(firstParty: Bool?) throws {
        let result = ConfigurationLoader.check(
            data: Data(Self.config(firstParty: firstParty, apps: Self.android).utf8))
        #expect(result.configuration == nil)
        let problem = try #require(result.problems.first { $0.path == "$.clients[0].android_apps" })
        #expect(problem.severity == .error)
        #expect(problem.message.contains("first_party"))
        #expect(problem.message.contains("full trust"))
    }

    @Test(arguments: [nil, false])
    func aThirdPartyClientCannotBePublishedAsWebcredentials(firstParty: Bool?) throws {
        let result = ConfigurationLoader.check(
            data: Data(Self.config(firstParty: firstParty, apps: Self.apple).utf8))
        #expect(result.configuration == nil)
        let problem = try #require(result.problems.first { $0.path == "$.clients[0].apple_app_ids" })
        #expect(problem.severity == .error)
        #expect(problem.message.contains("first_party"))
        #expect(problem.message.contains("saved passwords"))
    }

    @Test func aFirstPartyClientMayNameItsApps() throws {
        let json = Self.config(firstParty: true, apps: Self.android + ", " + Self.apple)
        let configuration = try #require(ConfigurationLoader.check(data: Data(json.utf8)).configuration)
        #expect(configuration.androidAppOrigins.count == 1)
        #expect(
            configuration.allowedWebAuthnOrigins.contains(try #require(configuration.androidAppOrigins.first))
        )
    }

    @Test func reloadRefusesAThirdPartyClientWithApps() throws {
        let app = try TestApplication()
        let clients = ReloadableClients(app.configuration)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apps-\(UUID().uuidString).json")
        try Data(Self.config(firstParty: false, apps: Self.android, issuer: "http://localhost:8080").utf8)
            .write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let outcome = ConfigurationReload.reload(
            path: file.path, running: app.configuration, clients: clients, pool: app.database.pool,
            log: Log(write: { _ in }), environment: [:])
        guard case .refused(let problems) = outcome else {
            Issue.record("reload accepted a third-party client with android_apps: \(outcome)")
            return
        }
        #expect(
            problems.contains { $0.path == "$.clients[0].android_apps" && $0.message.contains("full trust") })
        #expect(clients.current.webAuthnOrigins == app.configuration.allowedWebAuthnOrigins)
        #expect(!clients.current.webAuthnOrigins.contains { $0.hasPrefix("android:apk-key-hash:") })
    }
}
