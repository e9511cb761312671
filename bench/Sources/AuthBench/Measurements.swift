import Foundation
import Synchronization

/// Latencies and outcomes gathered by every worker thread.
final class Measurements: Sendable {
    private struct State {
        var latencies: [Double] = []
        var ok = 0
        var errors = 0
        var statuses: [Int: Int] = [:]
    }
    private let state = Mutex(State())

    func record(_ workerLatencies: [Double], ok: Int, errors: Int, statuses: [Int: Int]) {
        state.withLock {
            $0.latencies += workerLatencies
            $0.ok += ok
            $0.errors += errors
            $0.statuses.merge(statuses, uniquingKeysWith: +)
        }
    }

    /// One line for bench/run: `result rps=… p50_ms=… p99_ms=… ok=… errors=… statuses=…`.
    func summary(seconds: Double) -> String {
        state.withLock { state in
            let sorted = state.latencies.sorted()
            func percentile(_ p: Double) -> Double {
                guard !sorted.isEmpty else { return 0 }
                return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))] * 1000
            }
            let statuses = state.statuses.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
            return String(
                format: "result rps=%.1f p50_ms=%.3f p99_ms=%.3f ok=%d errors=%d statuses=%@",
                Double(state.ok) / seconds, percentile(0.50), percentile(0.99), state.ok, state.errors, statuses)
        }
    }
}

/// Runs `count` threads and waits for them all.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 512 * 1024
        thread.start()
    }
    group.wait()
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
