import Foundation
import Synchronization

/// The loop of a worker that drains a queue table (back-channel logout deliveries, revocations
/// at Apple): a thread that runs a pass until stopped, and sleeps after a pass that found
/// nothing to do.
final class PollingThread: Sendable {
    private let started = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread; `pass` returns how many items it handled.
    func start(
        name: String, idleSeconds: @escaping @Sendable () -> Double, pass: @escaping @Sendable () -> Int
    ) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                if pass() == 0 { Thread.sleep(forTimeInterval: idleSeconds()) }
            }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops the thread after its current pass, and waits for it.
    func stop() {
        guard started.load(ordering: .relaxed), !stopped.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }
}
