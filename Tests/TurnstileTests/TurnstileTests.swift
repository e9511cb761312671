import Foundation
import Synchronization
import Testing

@testable import Turnstile

/// Starts `body` on a thread of its own.
private func spawn(_ body: @escaping @Sendable () -> Void) {
    Thread { body() }.start()
}

private func wait(_ semaphore: DispatchSemaphore, seconds: Int = 5) -> Bool {
    semaphore.wait(timeout: .now() + .seconds(seconds)) == .success
}

@Suite struct TurnstileTests {
    @Test func noMoreThanTheLimitRunAtOnce() {
        let turnstile = Turnstile(limit: 2)
        let running = Mutex(0)
        let highest = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<6 {
            spawn {
                turnstile.run {
                    let now = running.withLock { value in
                        value += 1
                        return value
                    }
                    highest.withLock { $0 = max($0, now) }
                    usleep(20_000)
                    running.withLock { $0 -= 1 }
                }
                done.signal()
            }
        }
        for _ in 0..<6 { #expect(wait(done)) }
        #expect(highest.withLock { $0 } == 2)
    }

    @Test func aBlockedThreadGivesItsTurnToAnother() {
        // One turn. The first thread waits for something only a second thread does; the second
        // can run only if the first gave its turn away while it waited.
        let turnstile = Turnstile(limit: 1, overdraftAfter: .seconds(10))
        let signalledBySecond = DispatchSemaphore(value: 0)
        let firstBlocked = DispatchSemaphore(value: 0)
        let firstSawSignal = Mutex<Bool?>(nil)
        let firstDone = DispatchSemaphore(value: 0)
        spawn {
            turnstile.run {
                let seen = Turnstile.whileBlocked {
                    firstBlocked.signal()
                    return wait(signalledBySecond, seconds: 3)
                }
                firstSawSignal.withLock { $0 = seen }
            }
            firstDone.signal()
        }
        #expect(wait(firstBlocked))
        spawn { turnstile.run { _ = signalledBySecond.signal() } }
        #expect(wait(firstDone))
        let seen = firstSawSignal.withLock { $0 }
        #expect(seen == true)
        #expect(turnstile.overdraftCount == 0)
    }

    @Test func aThreadBackFromAWaitGoesBeforeOneThatHasNotStarted() {
        let turnstile = Turnstile(limit: 1, overdraftAfter: .seconds(10))
        let order = Mutex<[String]>([])
        let aBlocked = DispatchSemaphore(value: 0)
        let aMayReturn = DispatchSemaphore(value: 0)
        let bRunning = DispatchSemaphore(value: 0)
        let bMayFinish = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        spawn {
            turnstile.run {
                Turnstile.whileBlocked {
                    aBlocked.signal()
                    _ = wait(aMayReturn)
                }
                order.withLock { $0.append("A") }
            }
            finished.signal()
        }
        #expect(wait(aBlocked))
        spawn {
            turnstile.run {
                bRunning.signal()
                _ = wait(bMayFinish)
                order.withLock { $0.append("B") }
            }
            finished.signal()
        }
        #expect(wait(bRunning))
        // A comes back from its wait and C arrives, both while B holds the only turn.
        aMayReturn.signal()
        usleep(50_000)
        spawn {
            turnstile.run { order.withLock { $0.append("C") } }
            finished.signal()
        }
        usleep(50_000)
        bMayFinish.signal()
        for _ in 0..<3 { #expect(wait(finished)) }
        #expect(order.withLock { $0 } == ["B", "A", "C"])
    }

    @Test func aThreadBackFromAWaitRunsWithoutATurnRatherThanWaitForever() {
        // The only turn is held by a thread waiting (without giving its turn away) for what the
        // first thread does after its own wait: without the overdraft neither would go on.
        let turnstile = Turnstile(limit: 1, overdraftAfter: .milliseconds(50))
        let firstBlocked = DispatchSemaphore(value: 0)
        let firstMayReturn = DispatchSemaphore(value: 0)
        let secondRunning = DispatchSemaphore(value: 0)
        let firstWentOn = DispatchSemaphore(value: 0)
        let secondSaw = Mutex<Bool?>(nil)
        let finished = DispatchSemaphore(value: 0)
        spawn {
            turnstile.run {
                Turnstile.whileBlocked {
                    firstBlocked.signal()
                    _ = wait(firstMayReturn)
                }
                firstWentOn.signal()
            }
            finished.signal()
        }
        #expect(wait(firstBlocked))
        spawn {
            turnstile.run {
                secondRunning.signal()
                let seen = wait(firstWentOn, seconds: 3)
                secondSaw.withLock { $0 = seen }
            }
            finished.signal()
        }
        #expect(wait(secondRunning))
        firstMayReturn.signal()
        for _ in 0..<2 { #expect(wait(finished)) }
        let seen = secondSaw.withLock { $0 }
        #expect(seen == true)
        #expect(turnstile.overdraftCount == 1)
        // Every turn came back: a new thread gets one at once.
        let again = DispatchSemaphore(value: 0)
        spawn { turnstile.run { _ = again.signal() } }
        #expect(wait(again))
    }

    @Test func outsideATurnAWaitOnlyRunsItsBody() {
        #expect(Turnstile.whileBlocked { 42 } == 42)
        let turnstile = Turnstile(limit: 1)
        // Nested: the inner call runs at once instead of waiting for the only turn.
        #expect(turnstile.run { turnstile.run { 7 } } == 7)
    }
}
