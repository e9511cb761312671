import Foundation
import Postgres
import Testing

@testable import AuthServer

@Suite struct HealthEndpointTests {
    @Test func healthzAndReadyzAnswer() throws {
        let app = try TestApplication()
        let health = try app.client.get("/healthz")
        #expect(health.status == 200)
        #expect(health.text == "ok\n")
        #expect(health.header("X-Content-Type-Options") == "nosniff")
        #expect(health.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
        let ready = try app.client.get("/readyz")
        #expect(ready.status == 200)
    }

    @Test func readyzFollowsTheDatabaseDownAndBackUp() throws {
        let directory = URL(fileURLWithPath: "/tmp/auth-readyz-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var cluster = try PostgresCluster.start(dataDirectory: directory.appendingPathComponent("pg"))
        defer { try? cluster.stop() }
        try cluster.createDatabase("auth")
        let app = try TestApplication { $0.databaseURL = cluster.url(database: "auth") }
        #expect(try app.client.get("/readyz").status == 200)

        try cluster.stop()
        let down = try app.client.get("/readyz")
        #expect(down.status == 503)
        #expect(down.text == "database unavailable\n")
        #expect(try app.client.get("/healthz").status == 200, "the process itself stays healthy")

        cluster = try PostgresCluster.start(dataDirectory: cluster.dataDirectory, port: cluster.port)
        #expect(try app.client.get("/readyz").status == 200, "recovers without a restart")
    }

    @Test func metricsCountRequestsByRouteAndStatus() throws {
        let app = try TestApplication()
        _ = try app.client.get("/healthz")
        _ = try app.client.get("/healthz")
        _ = try app.client.get("/no-such-page?code=secret")
        let metrics = try app.client.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(metrics.text.contains("http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 2"))
        #expect(metrics.text.contains("http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"} 1"))
        #expect(metrics.text.contains("http_request_duration_seconds_count{route=\"/healthz\"} 2"))
        #expect(metrics.text.contains("db_pool_connections{state=\"max\"} 10"))
        let log = app.logBuffer.text
        #expect(log.contains("path=/healthz"))
        #expect(!log.contains("secret"), "query strings must never be logged")
    }

    /// Any token is a valid method name to the parser: a client inventing one per request must
    /// not add a series per request (each one kept until restart, each rendered at every scrape).
    @Test func madeUpMethodsShareOneSeries() throws {
        let app = try TestApplication()
        for index in 0..<20 {
            let reply = try app.client.send(
                method: "X\(index)" + String(repeating: "A", count: 200), target: "/healthz", headers: [], body: [])
            #expect(reply.status >= 400)
        }
        let metrics = try app.client.get("/metrics").text
        #expect(!metrics.contains("AAAA"))
        #expect(metrics.contains("http_requests_total{method=\"other\",route=\"/healthz\",status=\"405\"} 20"))
    }
}
