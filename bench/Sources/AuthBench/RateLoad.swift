import Foundation

/// `rate`: an open-loop load at a fixed request rate. Request i is due at start + i/rate;
/// latency runs from when it was due (not when it was sent), so a stalled server cannot
/// hide its queue (no coordinated omission). Worker w sends requests w, w+K, w+2K, …
func rateLoad(
    port: UInt16, path: String, headers: [(String, String)], rate: Double, seconds: Double, connections: Int
) -> String {
    let measurements = Measurements()
    let total = Int(rate * seconds)
    let started = monotonicSeconds() + 0.05
    runThreads(connections) { worker in
        let connection = HTTPConnection(port: port)
        let request = HTTPConnection.encode("GET", path, port: port, headers: headers)
        var latencies: [Double] = []
        var ok = 0
        var errors = 0
        var statuses: [Int: Int] = [:]
        var index = worker
        while index < total {
            let due = started + Double(index) / rate
            let wait = due - monotonicSeconds()
            if wait > 0 { usleep(useconds_t(wait * 1e6)) }
            do {
                let reply = try connection.send(request)
                statuses[reply.status, default: 0] += 1
                if reply.status < 400 {
                    ok += 1
                    latencies.append(reply.receivedAt - due)
                } else {
                    errors += 1
                }
            } catch {
                errors += 1
            }
            index += connections
        }
        measurements.record(latencies, ok: ok, errors: errors, statuses: statuses)
    }
    return measurements.summary(seconds: monotonicSeconds() - started)
}
