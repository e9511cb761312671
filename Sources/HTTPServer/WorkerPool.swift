import Foundation

/// A fixed set of threads running blocking work from a bounded queue. Bounded so that a flood
/// of requests turns into quick 503s instead of unbounded memory and latency.
final class WorkerPool: @unchecked Sendable {
    typealias Job = @Sendable (inout WorkerState) -> Void

    // All mutable state is guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var queue: RingBuffer<Job>
    /// Workers waiting on `condition`; only they need a wake-up (a busy worker takes the
    /// next job without sleeping), which saves a futex call per request under load.
    private var idle = 0
    private let capacity: Int
    private var stopped = false
    private let finished = DispatchGroup()

    init(threads: Int, capacity: Int) {
        self.capacity = capacity
        queue = RingBuffer(capacity: min(capacity, 1024))
        for index in 0..<threads {
            finished.enter()
            let thread = Thread { [self] in
                run()
                finished.leave()
            }
            thread.name = "http-worker-\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Queues `jobs` in order; returns how many were accepted (the rest did not fit or the
    /// pool is stopping).
    func submit(_ jobs: [Job]) -> Int {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return 0 }
        let accepted = min(jobs.count, capacity - queue.count)
        guard accepted > 0 else { return 0 }
        for job in jobs[0..<accepted] { queue.append(job) }
        for _ in 0..<min(accepted, idle) { condition.signal() }
        return accepted
    }

    /// Drops queued jobs and waits until `deadline` for running ones to finish. Returns false
    /// when some thread is still busy then (a blocked handler cannot be interrupted; its
    /// thread exits once the handler returns).
    @discardableResult
    func stop(deadline: DispatchTime = .distantFuture) -> Bool {
        condition.lock()
        stopped = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
        return finished.wait(timeout: deadline) == .success
    }

    private func run() {
        var state = WorkerState()
        while true {
            condition.lock()
            while queue.isEmpty && !stopped {
                idle += 1
                condition.wait()
                idle -= 1
            }
            if stopped {
                condition.unlock()
                return
            }
            let job = queue.removeFirst()
            condition.unlock()
            if let job { job(&state) }
        }
    }
}

/// Per-thread state handed to each job: a cheap generator for request ids (not secrets) and
/// the `Date` header bytes, reformatted once per second without any lock.
struct WorkerState {
    private var seed: UInt64
    private var dateSecond = -1
    private var date: [UInt8] = []

    mutating func dateBytes() -> [UInt8] {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = Int(now.tv_sec)
        if second != dateSecond {
            dateSecond = second
            date = Array(HTTPDate.format(epochSeconds: second).utf8)
        }
        return date
    }

    init() {
        var system = SystemRandomNumberGenerator()
        seed = system.next()
    }

    /// SplitMix64.
    mutating func nextRandom() -> UInt64 {
        seed &+= 0x9E37_79B9_7F4A_7C15
        var z = seed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A growable FIFO without the O(n) `removeFirst` of Array.
struct RingBuffer<Element> {
    private var storage: [Element?]
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) { storage = Array(repeating: nil, count: max(capacity, 1)) }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        if count == storage.count {
            var grown = [Element?](repeating: nil, count: storage.count * 2)
            for i in 0..<count { grown[i] = storage[(head + i) % storage.count] }
            storage = grown
            head = 0
        }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    mutating func removeFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    mutating func removeAll() {
        storage = Array(repeating: nil, count: storage.count)
        head = 0
        count = 0
    }
}
