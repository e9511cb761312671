import Foundation
import Testing

@testable import AuthServer

/// `/metrics` tells anyone who reads it how many sign-ins fail, which routes are hit and how
/// busy the database is: it answers this machine and the addresses an operator lists only.
@Suite struct MetricsExposureTests {
    @Test func metricsAreHiddenFromAClientForwardedByATrustedProxy() throws {
        let app = try TestApplication { $0.http.trustedProxies = ["127.0.0.1", "::1"] }
        let reply = try TestAgent(app).send("GET", "/metrics", headers: [("X-Forwarded-For", "203.0.113.7")])
        #expect(reply.status == 404)
        #expect(!reply.text.contains("http_requests_total"))
    }

    @Test func metricsAreHiddenFromAClientForwardedByAnUntrustedLoopbackProxy() throws {
        let app = try TestApplication()
        let reply = try TestAgent(app).send("GET", "/metrics", headers: [("X-Forwarded-For", "203.0.113.7")])
        #expect(reply.status == 404)
        #expect(!reply.text.contains("http_requests_total"))
    }

    @Test func metricsAnswerTheMachineItself() throws {
        let app = try TestApplication()
        let reply = try TestAgent(app).send("GET", "/metrics")
        #expect(reply.status == 200)
        #expect(reply.text.contains("http_requests_total"))
    }
}

@Suite struct MetricsReadersTests {
    @Test func listedAddressesMayReadMetricsAndOthersMayNot() throws {
        let app = try TestApplication {
            $0.http.trustedProxies = ["127.0.0.1", "::1"]
            $0.metrics.allowedAddresses = ["203.0.113.0/24"]
        }
        let listed = try TestAgent(app).send("GET", "/metrics", headers: [("X-Forwarded-For", "203.0.113.7")])
        #expect(listed.status == 200)
        #expect(listed.text.contains("http_requests_total"))
        let other = try TestAgent(app).send("GET", "/metrics", headers: [("X-Forwarded-For", "198.51.100.1")])
        #expect(other.status == 404)
    }

    @Test func allowedAddressesAreValidated() throws {
        let result = ConfigurationLoader.check(
            data: Data(
                #"{"issuer": "https://id.example.com", "clients": [], "metrics": {"allowed_addresses": ["10.0.0.0/8", "prometheus.local"]}}"#
                    .utf8))
        #expect(
            result.problems.map(\.description) == [
                "error: $.metrics.allowed_addresses[1]: must be an IP address or a CIDR block, like 10.0.0.5 or 10.0.0.0/8"
            ])
    }
}

@Suite struct TransportSettingsTests {
    @Test func connectionLimitsAndKeepAliveAreReadAndPassedToTheServer() throws {
        let json = #"""
            {"issuer": "https://id.example.com", "clients": [],
             "http": {"max_connections_per_address": 16, "keep_alive_timeout_seconds": 5, "trusted_proxies": ["10.0.0.0/8"]}}
            """#
        let configuration = try #require(ConfigurationLoader.check(data: Data(json.utf8)).configuration)
        let server = ServeCommand.serverConfiguration(configuration)
        #expect(server.maxConnectionsPerAddress == 16)
        #expect(server.idleTimeout == .seconds(5))
        #expect(server.connectionLimitExemptions.map(\.description) == ["10.0.0.0/8"])

        let defaults = ServeCommand.serverConfiguration(
            try #require(
                ConfigurationLoader.check(
                    data: Data(#"{"issuer": "https://id.example.com", "clients": []}"#.utf8)
                ).configuration))
        #expect(defaults.maxConnectionsPerAddress == 64)
        #expect(defaults.idleTimeout == .seconds(10))
        #expect(defaults.connectionLimitExemptions.isEmpty)
    }

    @Test func outOfRangeLimitsAreErrors() {
        let json = #"""
            {"issuer": "https://id.example.com", "clients": [],
             "http": {"max_connections_per_address": 0, "keep_alive_timeout_seconds": 3600}}
            """#
        let problems = ConfigurationLoader.check(data: Data(json.utf8)).problems.map(\.path)
        #expect(problems == ["$.http.max_connections_per_address", "$.http.keep_alive_timeout_seconds"])
    }
}
