import Foundation
import Testing

@testable import AuthServer

/// A hash of the form `auth-server clients hash-secret` writes, for configurations whose
/// client never authenticates in the test.
enum ClientSecretFixture {
    static let wellFormed = "$hmac-sha256$AAECAwQFBgcICQoLDA0ODw$ObV2ckyoBJFnYNAAENDZoP0FE9hD8MMU_goHlwAIlK4"
}

@Suite struct ConfigurationTests {
    static let minimal = """
        {"issuer": "https://id.example.com", "clients": [
          {"client_id": "web", "redirect_uris": ["https://app.example.com/cb"], "client_secret_hash": "\(ClientSecretFixture.wellFormed)"}
        ]}
        """

    func problems(_ json: String, environment: [String: String] = [:]) -> [String] {
        ConfigurationLoader.check(data: Data(json.utf8), environment: environment).problems.map(\.description)
    }

    @Test func minimalConfigurationLoadsWithDefaults() throws {
        let result = ConfigurationLoader.check(data: Data(Self.minimal.utf8))
        #expect(result.problems.isEmpty)
        let configuration = try #require(result.configuration)
        #expect(configuration.listen == .init(host: "127.0.0.1", port: 8080))
        #expect(configuration.databaseURL == nil)
        #expect(configuration.dataDirectory == "var")
        let client = try #require(configuration.clients.first)
        #expect(client.tokenEndpointAuthMethod == .clientSecretBasic)
        #expect(client.requirePKCE)
        #expect(client.grantTypes == ["authorization_code"])
    }

    @Test func accountSettingsDefaultFromTheIssuer() throws {
        let configuration = try #require(
            ConfigurationLoader.check(data: Data(Self.minimal.utf8)).configuration)
        #expect(configuration.relyingPartyID == "id.example.com")
        #expect(configuration.allowedWebAuthnOrigins == ["https://id.example.com"])
        #expect(configuration.usesHTTPS)
        #expect(configuration.sessions == .init())
        #expect(configuration.signInThrottle.accountMaxFailures == 10)
    }

    @Test func accountSettingsAreValidated() throws {
        let json = """
            {"issuer": "https://id.example.com:8443", "clients": [],
             "webauthn": {"rp_id": "example.com", "rp_name": "Example", "additional_origins": ["https://www.example.com", "http://x"],
                          "challenge_lifetime_seconds": 5},
             "sessions": {"lifetime_seconds": 3600, "idle_timeout_seconds": 600},
             "sign_in_throttle": {"account_max_failures": 0, "window_seconds": 60}}
            """
        let found = problems(json)
        #expect(found.contains { $0.contains("$.webauthn.additional_origins[1]") })
        #expect(found.contains { $0.contains("$.webauthn.challenge_lifetime_seconds") })
        #expect(found.contains { $0.contains("$.sign_in_throttle.account_max_failures") })
        #expect(found.count == 3)
        #expect(
            problems(
                #"{"issuer": "https://id.example.com", "clients": [], "webauthn": {"rp_id": "other.com"}}"#
            )
            .contains { $0.contains("$.webauthn.rp_id") })
        let valid = try #require(
            ConfigurationLoader.check(
                data: Data(
                    json.replacingOccurrences(of: #", "http://x""#, with: "")
                        .replacingOccurrences(
                            of: #""challenge_lifetime_seconds": 5"#,
                            with: #""challenge_lifetime_seconds": 60"#
                        )
                        .replacingOccurrences(
                            of: #""account_max_failures": 0"#, with: #""account_max_failures": 3"#
                        ).utf8)
            ).configuration)
        #expect(valid.relyingPartyID == "example.com")
        #expect(valid.issuerOrigin == "https://id.example.com:8443")
        #expect(valid.allowedWebAuthnOrigins == ["https://id.example.com:8443", "https://www.example.com"])
        #expect(valid.sessions.idleTimeoutSeconds == 600)
    }

    @Test func theReauthenticationWindowDefaultsToFiveMinutesAndIsValidated() throws {
        #expect(Configuration.SessionSettings().reauthenticationSeconds == 300)
        func json(_ seconds: Int) -> String {
            #"{"issuer": "https://id.example.com", "clients": [], "sessions": {"reauthentication_seconds": \#(seconds)}}"#
        }
        let configuration = try #require(ConfigurationLoader.check(data: Data(json(600).utf8)).configuration)
        #expect(configuration.sessions.reauthenticationSeconds == 600)
        for bad in [0, 10, 86_401] {
            #expect(problems(json(bad)).contains { $0.contains("$.sessions.reauthentication_seconds") })
        }
    }

    @Test func trustedProxiesMustBeAddressesOrBlocks() {
        let found = problems(
            #"{"issuer": "https://id.example.com", "clients": [], "http": {"trusted_proxies": ["10.0.0.0/8", "proxy.local", "::1/200"]}}"#
        )
        #expect(found.count == 2)
        #expect(found.contains { $0.contains("$.http.trusted_proxies[1]") })
        #expect(found.contains { $0.contains("$.http.trusted_proxies[2]") })
    }

    @Test func exampleConfigurationIsValid() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../config/example.json").standardized
        let result = ConfigurationLoader.check(path: url.path)
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.configuration?.clients.map(\.clientID) == ["demo-web", "demo-ios"])
    }

    @Test func environmentOverridesDatabaseURLAndListen() throws {
        let result = ConfigurationLoader.check(
            data: Data(Self.minimal.utf8),
            environment: [
                "AUTH_SERVER_DATABASE_URL": "postgresql://db/auth", "AUTH_SERVER_LISTEN": "[::1]:9000",
            ])
        let configuration = try #require(result.configuration)
        #expect(configuration.databaseURL == "postgresql://db/auth")
        #expect(configuration.listen == .init(host: "::1", port: 9000))
    }

    @Test func invalidJSONIsOneProblem() {
        #expect(problems("{\"issuer\": ") == ["error: $: is not valid JSON"])
    }

    @Test(arguments: [
        ("ftp://id.example.com", "must use https (http only for localhost)"),
        ("http://id.example.com", "must use https (http only for localhost)"),
        ("https://id.example.com/", "must not end with a slash"),
        ("https://id.example.com?x=1", "must not contain a query or fragment"),
        ("id.example.com", "must be an absolute URL like https://id.example.com"),
    ])
    func issuerRules(issuer: String, message: String) {
        let json = Self.minimal.replacingOccurrences(of: "https://id.example.com", with: issuer)
        #expect(problems(json) == ["error: $.issuer: \(message)"])
    }

    /// A registered redirect URI is matched exactly, but its path is also published (decoded)
    /// in apple-app-site-association, where `*` and `?` are wildcards.
    @Test(arguments: [
        ("https://app.example.com/cb*", "must not contain wildcards"),
        ("https://app.example.com/cb%2A", "must not contain wildcards, percent-encoded or not (%2A, %3F in the path)"),
        ("https://app.example.com/%2a", "must not contain wildcards, percent-encoded or not (%2A, %3F in the path)"),
        ("https://app.example.com/c%3Fb", "must not contain wildcards, percent-encoded or not (%2A, %3F in the path)"),
    ])
    func redirectURIsHaveNoWildcards(uri: String, message: String) {
        let json = Self.minimal.replacingOccurrences(of: "https://app.example.com/cb", with: uri)
        #expect(problems(json) == ["error: $.clients[0].redirect_uris[0]: \(message)"])
    }

    /// A secret pasted where its hash belongs would load and then never authenticate (and sit
    /// in the clear in the file): only the form `clients hash-secret` writes is accepted.
    @Test(arguments: [
        "web-client-secret-with-plenty-of-entropy-0123456789",
        "$hmac-sha256$web-client-secret",
        "$hmac-sha256$AAECAwQFBgcICQoLDA0ODw$ObV2ckyoBJFnYNAAENDZoP0FE9hD8MMU_goHlwAIlK",
    ])
    func aClientSecretHashMustBeAHash(value: String) {
        let json = Self.minimal.replacingOccurrences(of: ClientSecretFixture.wellFormed, with: value)
        #expect(
            problems(json) == [
                "error: $.clients[0].client_secret_hash: must be a hash from auth-server clients hash-secret ($hmac-sha256$<salt>$<mac>), never the secret itself"
            ])
    }

    @Test func everyProblemIsReportedWithItsPath() {
        let json = """
            {"issuer": "https://id.example.com", "listen": "nowhere", "colour": "blue",
             "http": {"max_body_bytes": "big"},
             "clients": [
               {"client_id": "a", "redirect_uris": ["https://a.example/cb#frag", "http://evil.example/cb"],
                "client_secret_hash": "$x$y$z", "grant_types": ["implicit"], "scope": "openid admin"},
               {"client_id": "a", "application_type": "native", "redirect_uris": ["myapp:/cb", "http://localhost/cb"],
                "token_endpoint_auth_method": "client_secret_post", "require_pkce": false, "client_secret": "s"},
               {"redirect_uris": [], "tokn_endpoint_auth_method": "none", "token_endpoint_auth_method": "none"}
             ]}
            """
        #expect(
            problems(json) == [
                "error: $.listen: must be host:port, like 127.0.0.1:8080 or [::1]:8080",
                "error: $.http.max_body_bytes: must be an integer, found a string",
                "error: $.clients[0].redirect_uris[0]: must not contain a fragment (RFC 6749 §3.1.2)",
                "error: $.clients[0].redirect_uris[1]: must use https (http only on localhost, for development)",
                "error: $.clients[0].client_secret_hash: must be a hash from auth-server clients hash-secret ($hmac-sha256$<salt>$<mac>), never the secret itself",
                "error: $.clients[0].grant_types[0]: \"implicit\" is not supported: OAuth 2.1 and RFC 9700 retire it; use authorization_code with PKCE",
                "error: $.clients[0].scope: \"admin\" is not a supported scope (email offline_access openid profile)",
                "error: $.clients[1].redirect_uris[0]: a private-use scheme must be in reverse-domain form, like com.example.app (RFC 8252 §7.1)",
                "error: $.clients[1].redirect_uris[1]: native loopback redirects must use the IP literal 127.0.0.1 or [::1], not localhost (RFC 8252 §8.3)",
                "error: $.clients[1].token_endpoint_auth_method: a native app cannot keep a secret, so it must be \"none\" (RFC 8252 §8.5)",
                "error: $.clients[1].client_secret: store only a hash: use client_secret_hash (auth-server clients hash-secret)",
                "error: $.clients[1].require_pkce: public clients always use PKCE (RFC 9700 §2.1.1)",
                "error: $.clients[1].client_id: duplicates an earlier client_id \"a\"",
                "error: $.clients[2].client_id: is required",
                "error: $.clients[2].redirect_uris: must list at least one URI",
                "error: $.clients[2].tokn_endpoint_auth_method: is not a known setting",
                "error: $.colour: is not a known setting",
            ])
    }

    @Test func nativeClientRules() throws {
        let json = """
            {"issuer": "https://id.example.com", "clients": [
              {"client_id": "ios", "application_type": "native", "first_party": true,
               "redirect_uris": ["https://app.example.com/cb", "com.example.app:/cb", "http://127.0.0.1/cb", "http://[::1]/cb"],
               "apple_app_ids": ["ABCDE12345.com.example.app", "bad"],
               "android_apps": [{"package_name": "com.example.app", "sha256_cert_fingerprints": ["AB:CD"]}]}
            ]}
            """
        #expect(
            problems(json) == [
                "error: $.clients[0].apple_app_ids[1]: must be TEAMID.bundle.id, like ABCDE12345.com.example.app",
                "error: $.clients[0].android_apps[0].sha256_cert_fingerprints[0]: must be 32 bytes in hex separated by colons, like 14:6D:E9:…",
                // The https callback is on another host than the issuer's: this server cannot vouch for the app there.
                "warning: $.clients[0].redirect_uris[0]: is on app.example.com, which this server publishes no app association for: that host must serve apple-app-site-association / assetlinks.json naming the app, or the app cannot claim the callback",
            ])
    }

    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1", 8080), ("[::1]:0", "::1", 0), ("localhost:443", "localhost", 443),
    ])
    func listenParsing(text: String, host: String, port: Int) {
        #expect(ConfigurationLoader.parseListen(text) == .init(host: host, port: port))
    }

    @Test(arguments: ["8080", ":8080", "host:", "host:70000", "[::1]8080", "a:b:c"])
    func listenRejects(text: String) {
        #expect(ConfigurationLoader.parseListen(text) == nil)
    }

    @Test func tlsFilesMustComeInPairsAndBeReadable() {
        let base = Self.minimal.dropLast()
        #expect(problems(base + #", "tls_cert_file": "/nonexistent/cert.pem"}"#) == [
            "error: $.tls_key_file: is required when tls_cert_file is set"
        ])
        #expect(problems(base + #", "tls_cert_file": "/nonexistent/cert.pem", "tls_key_file": "/nonexistent/key.pem"}"#) == [
            "error: $.tls_cert_file: cannot read /nonexistent/cert.pem",
            "error: $.tls_key_file: cannot read /nonexistent/key.pem",
        ])
    }
}
