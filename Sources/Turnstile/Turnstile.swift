import Foundation

/// Bounds how many threads run code at once, while letting more threads exist for when some
/// of them wait.
///
/// A thread holds a turn while it runs (`run(_:)`); code that blocks (a database round trip,
/// a wait for a pooled connection or a hasher's permit) wraps the wait in
/// `Turnstile.whileBlocked(_:)`, which gives the turn to another thread and takes one back
/// afterwards. So a server can keep many handlers in flight while the database is slow, yet
/// let no more than `limit` of them compete for the cores when it is fast.
///
/// A thread coming back from a wait goes before threads that have not started: it is further
/// along and may hold a connection or row locks that others need. It waits for a turn at most
/// `overdraftAfter`, then runs without one. That bound is what makes the turnstile safe where
/// a wait was not wrapped: if every turn were held by threads waiting on a lock whose holder
/// needs a turn to finish, the holder still finishes. The cost of a missed wait is only that
/// its turn stays idle.
public final class Turnstile: @unchecked Sendable {
    /// Threads allowed to run at once.
    public let limit: Int
    /// The longest a thread coming back from a wait waits for a turn before running without one.
    public let overdraftAfter: Duration

    // All mutable state is guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var free: Int
    private var returning = 0
    private var overdrafts = 0

    public init(limit: Int, overdraftAfter: Duration = .milliseconds(100)) {
        precondition(limit > 0, "a turnstile needs at least one turn")
        self.limit = limit
        self.overdraftAfter = overdraftAfter
        free = limit
    }

    /// How many times a thread ran without a turn because none came within `overdraftAfter`.
    public var overdraftCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return overdrafts
    }

    /// Runs `body` holding a turn, waiting as long as it takes for one. Nested calls on the
    /// same thread run `body` at once.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        if Holder.current != nil { return try body() }
        condition.lock()
        while free == 0 || returning > 0 { condition.wait() }
        free -= 1
        condition.unlock()
        let holder = Holder(turnstile: self)
        Holder.current = holder
        defer {
            Holder.current = nil
            if holder.holdsTurn { giveBack() }
        }
        return try body()
    }

    /// Runs `body`, which blocks, without the calling thread's turn: another thread runs
    /// meanwhile. Outside `run(_:)` (a background thread, a command) it only runs `body`.
    public static func whileBlocked<T>(_ body: () throws -> T) rethrows -> T {
        guard let holder = Holder.current, !holder.isBlocked else { return try body() }
        let turnstile = holder.turnstile
        // A thread that ran on without a turn has none to give, and tries again afterwards.
        if holder.holdsTurn { turnstile.giveBack() }
        holder.holdsTurn = false
        holder.isBlocked = true
        defer {
            holder.isBlocked = false
            holder.holdsTurn = turnstile.takeBack()
        }
        return try body()
    }

    private func giveBack() {
        condition.lock()
        free += 1
        // Returning threads and new ones wait on one condition: wake them all, the loop
        // conditions decide who goes.
        condition.broadcast()
        condition.unlock()
    }

    /// Takes a turn for a thread back from a wait; false when none came within `overdraftAfter`.
    private func takeBack() -> Bool {
        let deadline = Date().addingTimeInterval(Self.seconds(overdraftAfter))
        condition.lock()
        defer { condition.unlock() }
        returning += 1
        defer { returning -= 1 }
        while free == 0 {
            if !condition.wait(until: deadline) && Date() >= deadline {
                overdrafts += 1
                return false
            }
        }
        free -= 1
        return true
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// The turn of the current thread, kept in thread-local storage.
private final class Holder {
    let turnstile: Turnstile
    var holdsTurn = true
    /// Inside `whileBlocked`: a nested wait changes nothing.
    var isBlocked = false

    init(turnstile: Turnstile) { self.turnstile = turnstile }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static var current: Holder? {
        get {
            pthread_getspecific(key).map { Unmanaged<Holder>.fromOpaque($0).takeUnretainedValue() }
        }
        set {
            if let old = pthread_getspecific(key) { Unmanaged<Holder>.fromOpaque(old).release() }
            pthread_setspecific(key, newValue.map { Unmanaged.passRetained($0).toOpaque() })
        }
    }
}
