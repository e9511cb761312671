import Foundation
import Synchronization
import Testing
import Turnstile

@testable import Postgres

/// Every wait of this module gives the thread's turn away (`Turnstile.whileBlocked`). Each test
/// has one turn: a thread waits on the server or the pool, and a second thread, which needs the
/// turn, must run meanwhile. Had the first kept its turn, the second would not run before the
/// main thread gave up on it.
@Suite struct TurnstileWaitTests {
    enum Wait: CaseIterable, Sendable {
        /// A statement on its own (prepared, as every statement with a parameter).
        case statement
        /// The first statement of a transaction, sent in one pipeline with its `BEGIN`.
        case pipeline
    }

    @Test(arguments: Wait.allCases) func aStatementWaitingOnTheServerGivesItsTurnAway(_ wait: Wait) throws {
        // Advisory locks belong to a database: both sides use the same one.
        let url = try TestDatabase.freshDatabaseURL()
        let pool = PostgresPool(url: url, maxConnections: 1)
        let holder = try PostgresConnection(url: url)
        try holder.query("SELECT pg_advisory_lock(4242)")
        let turnstile = Turnstile(limit: 1, overdraftAfter: .seconds(30))
        let waiterDone = DispatchSemaphore(value: 0)
        let waiterFailed = Mutex(false)
        Thread {
            turnstile.run {
                do {
                    switch wait {
                    case .statement:
                        try pool.query("SELECT pg_advisory_xact_lock(\(4242))")
                    case .pipeline:
                        try pool.withTransaction { try $0.query("SELECT pg_advisory_xact_lock(\(4242))") }
                    }
                } catch {
                    waiterFailed.withLock { $0 = true }
                }
            }
            waiterDone.signal()
        }.start()
        try waitUntilALockIsAwaited(holder)
        let other = DispatchSemaphore(value: 0)
        Thread { turnstile.run { _ = other.signal() } }.start()
        let otherRan = other.wait(timeout: .now() + .seconds(3)) == .success
        try holder.query("SELECT pg_advisory_unlock(4242)")
        #expect(waiterDone.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(otherRan)
        #expect(!waiterFailed.withLock { $0 })
        pool.close()
    }

    @Test func aWaitForAPooledConnectionGivesItsTurnAway() throws {
        let pool = try TestDatabase.pool(maxConnections: 1, acquireTimeout: .seconds(30))
        let taken = DispatchSemaphore(value: 0)
        let giveBack = DispatchSemaphore(value: 0)
        Thread {
            _ = try? pool.withConnection { _ in
                taken.signal()
                giveBack.wait()
            }
        }.start()
        taken.wait()
        let turnstile = Turnstile(limit: 1, overdraftAfter: .seconds(30))
        let waiterDone = DispatchSemaphore(value: 0)
        let waiterGot = Mutex<Int?>(nil)
        Thread {
            turnstile.run {
                let one = try? pool.query("SELECT 1 AS one").first?.decode("one", as: Int.self)
                waiterGot.withLock { $0 = one }
            }
            waiterDone.signal()
        }.start()
        while pool.statistics.waiting == 0 { usleep(1_000) }
        let other = DispatchSemaphore(value: 0)
        Thread { turnstile.run { _ = other.signal() } }.start()
        let otherRan = other.wait(timeout: .now() + .seconds(3)) == .success
        giveBack.signal()
        #expect(waiterDone.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(otherRan)
        let got = waiterGot.withLock { $0 }
        #expect(got == 1)
        pool.close()
    }

    /// Returns once some session waits for an advisory lock.
    private func waitUntilALockIsAwaited(_ connection: PostgresConnection) throws {
        for _ in 0..<5_000 {
            let waiting = try connection.query(
                "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).first?.decode("n", as: Int.self)
            if waiting ?? 0 > 0 { return }
            usleep(1_000)
        }
        Issue.record("no session waited for the lock")
    }
}
