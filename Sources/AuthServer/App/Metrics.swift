import Foundation
import Synchronization

/// Counters and latency histograms rendered in the Prometheus text format at `/metrics`.
///
/// Routes are labelled with their pattern (`/users/:id`), never with the raw path, and methods
/// outside a fixed set as `other`, so the number of series stays bounded whatever clients send.
final class Metrics: Sendable {
    static let bucketBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    private struct RequestKey: Hashable { var method: String; var route: String; var status: Int }
    private struct Histogram {
        var buckets = [UInt64](repeating: 0, count: Metrics.bucketBounds.count)
        var count: UInt64 = 0
        var sum: Double = 0
    }
    private struct State {
        var requests: [RequestKey: UInt64] = [:]
        var latency: [String: Histogram] = [:]
        /// Counter name → rendered label set (`method="password",result="success"`) → value.
        var counters: [String: [String: UInt64]] = [:]
    }

    /// The application's counters and their help text; every one is rendered, from zero.
    static let counterHelp: KeyValuePairs<String, String> = [
        "auth_sign_ins_total": "Sign-in attempts by method (password, passkey) and result (success, failure, throttled).",
        "auth_passkey_upgrades_total": "Conditional passkey upgrades after a password sign-in (offered, succeeded).",
        "auth_passkey_counter_regressions_total":
            "Passkey sign-ins whose signature counter did not grow (possible clone), by action (warned, refused).",
        "auth_tokens_issued_total": "Token responses issued by grant type.",
        "auth_refresh_token_reuse_total": "Rotated refresh tokens presented again (their family is revoked).",
        "auth_code_replays_total": "Authorization codes presented a second time (what they produced is revoked).",
    ]

    static let unlabelledCounters: Set<String> = ["auth_refresh_token_reuse_total", "auth_code_replays_total"]

    /// Adds to a counter. Label values must come from a small fixed set (a method, a result,
    /// a grant type), never from request data, so the number of series stays bounded.
    func increment(_ name: String, _ labels: KeyValuePairs<String, String> = [:], by amount: UInt64 = 1) {
        let rendered = labels.map { "\($0.key)=\"\(Metrics.escape($0.value))\"" }.joined(separator: ",")
        state.withLock { $0.counters[name, default: [:]][rendered, default: 0] += amount }
    }

    /// A counter's value (for tests and the health page).
    func value(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) -> UInt64 {
        let rendered = labels.map { "\($0.key)=\"\(Metrics.escape($0.value))\"" }.joined(separator: ",")
        return state.withLock { $0.counters[name]?[rendered] ?? 0 }
    }

    private let state = Mutex(State())

    /// The method labels kept as they are; any other method a client sends is `other`.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    func observeRequest(method: String, route: String, status: Int, duration: Duration) {
        let seconds = duration.seconds
        let method = Metrics.knownMethods.contains(method) ? method : "other"
        state.withLock { state in
            state.requests[RequestKey(method: method, route: route, status: status), default: 0] += 1
            var histogram = state.latency[route] ?? Histogram()
            for (index, bound) in Metrics.bucketBounds.enumerated() where seconds <= bound {
                histogram.buckets[index] += 1
            }
            histogram.count += 1
            histogram.sum += seconds
            state.latency[route] = histogram
        }
    }

    /// The Prometheus exposition text; `gauges` are sampled by the caller at scrape time.
    func render(
        gauges: [(name: String, help: String, samples: [(labels: String, value: Double)])] = [],
        counters: [(name: String, help: String, samples: [(labels: String, value: Double)])] = []
    ) -> String {
        let snapshot = state.withLock { $0 }
        var out = "# HELP http_requests_total HTTP requests by method, route and status.\n"
        out += "# TYPE http_requests_total counter\n"
        for (key, count) in snapshot.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            out += "http_requests_total{method=\"\(key.method)\",route=\"\(Metrics.escape(key.route))\",status=\"\(key.status)\"} \(count)\n"
        }
        out += "# HELP http_request_duration_seconds Time from a complete request to its response.\n"
        out += "# TYPE http_request_duration_seconds histogram\n"
        for (route, histogram) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            let label = "route=\"\(Metrics.escape(route))\""
            for (index, bound) in Metrics.bucketBounds.enumerated() {
                out += "http_request_duration_seconds_bucket{\(label),le=\"\(bound)\"} \(histogram.buckets[index])\n"
            }
            out += "http_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(histogram.count)\n"
            out += "http_request_duration_seconds_sum{\(label)} \(histogram.sum)\n"
            out += "http_request_duration_seconds_count{\(label)} \(histogram.count)\n"
        }
        for (name, help) in Metrics.counterHelp {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
            let samples = snapshot.counters[name] ?? [:]
            // A counter without labels exists from the start; labelled ones appear with their first event.
            if samples.isEmpty && Metrics.unlabelledCounters.contains(name) { out += "\(name) 0\n" }
            for (labels, value) in samples.sorted(by: { $0.key < $1.key }) {
                out += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(labels)} \(value)\n"
            }
        }
        for (kind, families) in [("gauge", gauges), ("counter", counters)] {
            for family in families {
                out += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(kind)\n"
                for sample in family.samples {
                    let labels = sample.labels.isEmpty ? "" : "{\(sample.labels)}"
                    out += "\(family.name)\(labels) \(Metrics.format(sample.value))\n"
                }
            }
        }
        let build = BuildInfo.current
        out +=
            "# HELP build_info The build answering: release version, git commit, Swift and OpenSSL versions.\n"
        out += "# TYPE build_info gauge\n"
        out +=
            "build_info{version=\"\(Metrics.escape(build.version))\",commit=\"\(Metrics.escape(build.commit))\","
            + "swift=\"\(Metrics.escape(build.swift))\",openssl=\"\(Metrics.escape(build.openSSL))\"} 1\n"
        return out
    }

    private static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : String(value)
    }
}
