import HTTPServer
import Postgres

/// `/healthz` (the process answers), `/readyz` (the database answers) and `/metrics`.
struct HealthRoutes: Sendable {
    let pool: PostgresPool
    let metrics: Metrics
    /// Besides this machine, the client addresses that may read `/metrics`.
    var metricsReaders: [AddressRange] = []

    /// Whether the request may read `/metrics` (any other client gets 404).
    static func mayReadMetrics(_ request: HTTPRequest, readers: [AddressRange]) -> Bool {
        Loopback.isLocal(request) || readers.contains { $0.contains(request.remoteAddress) }
    }

    func register(on router: Router) {
        router.get("/healthz") { _, _ in
            var response = HTTPResponse.text("ok\n")
            response.headers.set("Cache-Control", "no-store")
            return response
        }
        router.get("/readyz") { [pool] _, _ in
            let ready = pool.ping()
            var response = HTTPResponse.text(ready ? "ready\n" : "database unavailable\n", status: ready ? .ok : .serviceUnavailable)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
        router.get("/metrics") { [pool, metrics, metricsReaders] request, _ in
            guard Self.mayReadMetrics(request, readers: metricsReaders) else { throw HTTPError(.notFound) }
            let stats = pool.statistics
            let text = metrics.render(gauges: [
                (
                    "db_pool_connections", "Database connections by state.",
                    [
                        ("state=\"in_use\"", Double(stats.inUse)), ("state=\"idle\"", Double(stats.idle)),
                        ("state=\"max\"", Double(stats.max)),
                    ]
                ),
                ("db_pool_waiting", "Requests waiting for a database connection.", [("", Double(stats.waiting))]),
                (
                    "auth_db_pool_connections", "Database pool connections by state.",
                    [("state=\"in_use\"", Double(stats.inUse)), ("state=\"idle\"", Double(stats.idle))]
                ),
                ("auth_db_pool_max_connections", "The pool's connection limit.", [("", Double(stats.max))]),
            ] + ((try? AdoptionReport.gauges(on: pool)) ?? []), counters: [
                (
                    "auth_db_pool_waits_total", "Checkouts that found no free connection and had to wait.",
                    [("", Double(stats.waits))]
                )
            ])
            var response = HTTPResponse.text(text)
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }
}
