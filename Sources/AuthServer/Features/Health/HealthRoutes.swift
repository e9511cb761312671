import HTTPServer

/// `/healthz` (the process answers), `/readyz` (the database answers) and `/metrics` (this
/// machine and the configured readers only; anyone else gets 404).
struct HealthRoutes: Sendable {
    let flow: HealthFlow
    /// Besides this machine, the client addresses that may read `/metrics`.
    var metricsReaders: [AddressRange] = []

    init(store: any HealthStore, metrics: Metrics, metricsReaders: [AddressRange] = []) {
        flow = HealthFlow(store: store, metrics: metrics)
        self.metricsReaders = metricsReaders
    }

    /// Whether the request may read `/metrics`.
    static func mayReadMetrics(_ request: HTTPRequest, readers: [AddressRange]) -> Bool {
        Loopback.isLocal(request) || readers.contains { $0.contains(request.remoteAddress) }
    }

    func register(on router: Router) {
        let flow = flow
        let readers = metricsReaders
        router.get("/healthz") { _, _ in Self.noStore(.text("ok\n")) }
        router.get("/readyz") { _, _ in
            let ready = flow.isReady()
            return Self.noStore(
                .text(ready ? "ready\n" : "database unavailable\n", status: ready ? .ok : .serviceUnavailable)
            )
        }
        router.get("/metrics") { request, _ in
            guard Self.mayReadMetrics(request, readers: readers) else { throw HTTPError(.notFound) }
            var response = HTTPResponse.text(flow.metricsText())
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return Self.noStore(response)
        }
    }

    private static func noStore(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
