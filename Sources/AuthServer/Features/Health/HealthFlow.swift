/// `/readyz` (the database answers) and `/metrics` (the request metrics, the connection pool
/// and passkey adoption, in the Prometheus text format).
struct HealthFlow: Sendable {
    let store: any HealthStore
    let metrics: Metrics

    func isReady() -> Bool { store.isReady() }

    func metricsText() -> String {
        let pool = store.connectionPool
        return metrics.render(
            gauges: [
                (
                    "db_pool_connections", "Database connections by state.",
                    [
                        ("state=\"in_use\"", Double(pool.inUse)), ("state=\"idle\"", Double(pool.idle)),
                        ("state=\"max\"", Double(pool.max)),
                    ]
                ),
                (
                    "db_pool_waiting", "Requests waiting for a database connection.",
                    [("", Double(pool.waiting))]
                ),
                (
                    "auth_db_pool_connections", "Database pool connections by state.",
                    [("state=\"in_use\"", Double(pool.inUse)), ("state=\"idle\"", Double(pool.idle))]
                ),
                ("auth_db_pool_max_connections", "The pool's connection limit.", [("", Double(pool.max))]),
            ] + store.adoptionGauges(),
            counters: [
                (
                    "auth_db_pool_waits_total", "Checkouts that found no free connection and had to wait.",
                    [("", Double(pool.waits))]
                )
            ])
    }
}
