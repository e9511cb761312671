import COpenSSL
#if canImport(Glibc)
    import Glibc
#endif
import Dispatch
import COpenSSL
import Synchronization

/// A response handed from a worker back to the loop that owns the connection. On plain
/// connections the worker has usually written it already (`written` bytes of it).
struct Completion: Sendable {
    var connectionID: UInt64
    var bytes: [UInt8]
    var written: Int
    var close: Bool
    /// The worker's write failed (the peer is gone): close without writing more.
    var writeFailed: Bool
}

/// One epoll thread: accepts connections, parses requests, writes responses and enforces
/// timeouts. Everything except `inbox` and the eventfd is touched only on the loop's own
/// thread (after `run()` starts), which is what makes the `@unchecked Sendable` sound:
/// workers only call `post(_:)`, the server only calls `requestStop(deadline:)`.
final class EventLoop: @unchecked Sendable {
    private static let listenerToken: UInt64 = 0
    private static let wakeToken: UInt64 = 1

    let shared: ServerShared
    private let epollFD: Int32
    private let wakeFD: Int32
    private let listenFD: Int32
    private struct Inbox {
        var completions: [Completion] = []
        var stopDeadline: UInt64?
    }
    private let inbox = Mutex(Inbox())
    /// Set while the loop is (about to be) blocked in `epoll_wait`. Workers write the eventfd
    /// only then: a loop that is awake drains the inbox before its next wait anyway, so under
    /// load most completions cost no system call at all.
    private let sleeping = Atomic<Bool>(false)
    let listenerRemoved = DispatchSemaphore(value: 0)

    // Loop-thread state.
    private var connections: [UInt64: Connection] = [:]
    private var nextID: UInt64 = 2
    private(set) var now: UInt64
    private(set) var stopping = false
    private var stopDeadline: UInt64 = 0
    private var acceptPausedUntil: UInt64 = 0
    /// Requests parsed during this iteration, handed to the workers together at its end.
    private var pendingJobs: [(connection: Connection, job: WorkerPool.Job)] = []
    /// The empty buffer swapped into the inbox on each drain.
    private var spareCompletions: [Completion] = []
    /// Read buffer shared by all connections of this loop (only one reads at a time).
    let scratch: UnsafeMutableRawBufferPointer

    init(shared: ServerShared, listenFD: Int32) throws(HTTPServerError) {
        self.shared = shared
        self.listenFD = listenFD
        now = EventLoop.monotonicMillis()
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw .system("epoll_create1", errno) }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            Glibc.close(epollFD)
            throw .system("eventfd", errno)
        }
        scratch = .allocate(byteCount: 64 * 1024, alignment: 16)
        // Fully initialised from here on: deinit closes the descriptors if this throws.
        guard register(wakeFD, token: EventLoop.wakeToken, events: EPOLLIN.rawValue), addListener() else {
            throw .system("epoll_ctl", errno)
        }
    }

    deinit {
        Glibc.close(epollFD)
        Glibc.close(wakeFD)
        scratch.deallocate()
    }

    // MARK: Cross-thread entry points

    /// Called by workers: queue a response and wake the loop if it sleeps and was not
    /// already woken. The loop announces sleep before it looks at the inbox for the last time
    /// (both under the inbox lock's ordering), so either it sees this completion or this
    /// sees it sleeping.
    func post(_ completion: Completion) {
        let wasEmpty = inbox.withLock { inbox in
            inbox.completions.append(completion)
            return inbox.completions.count == 1
        }
        if wasEmpty && sleeping.load(ordering: .sequentiallyConsistent) { wake() }
    }

    /// Stop accepting, close idle connections, and exit once in-flight requests are answered
    /// or `deadline` (monotonic milliseconds) passes.
    func requestStop(deadline: UInt64) {
        inbox.withLock { $0.stopDeadline = deadline }
        wake()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    // MARK: The loop

    func run() {
        let capacity: Int32 = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        defer { events.deallocate() }
        let sweepInterval = shared.sweepIntervalMillis
        var nextSweep = now + sweepInterval
        while true {
            let wakeAt = stopping ? min(nextSweep, stopDeadline) : nextSweep
            sleeping.store(true, ordering: .sequentiallyConsistent)
            let pending = inbox.withLock { !$0.completions.isEmpty }
            let timeout = pending ? 0 : Int32(clamping: wakeAt > now ? wakeAt - now : 0)
            let count = epoll_wait(epollFD, events, capacity, timeout)
            sleeping.store(false, ordering: .sequentiallyConsistent)
            now = EventLoop.monotonicMillis()
            if count < 0 && errno != EINTR {
                shared.log("event=http.loop_error call=epoll_wait errno=\(errno)")
                break
            }
            for index in 0..<Int(max(count, 0)) {
                let event = events[index]
                switch event.data.u64 {
                case EventLoop.listenerToken: acceptConnections()
                case EventLoop.wakeToken:
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                default: connections[event.data.u64]?.handle(events: event.events)
                }
            }
            drainInbox()
            flushJobs()
            if now >= nextSweep {
                sweep()
                nextSweep = now + sweepInterval
            }
            if stopping && (connections.isEmpty || now >= stopDeadline) { break }
        }
        for connection in Array(connections.values) { connection.close() }
        if !stopping { listenerRemoved.signal() }
    }

    func enqueue(_ connection: Connection, _ job: @escaping WorkerPool.Job) {
        pendingJobs.append((connection, job))
    }

    /// One queue operation for all requests of an iteration; the ones that do not fit get 503.
    private func flushJobs() {
        guard !pendingJobs.isEmpty else { return }
        let accepted = shared.pool.submit(pendingJobs.map(\.job))
        if accepted < pendingJobs.count {
            for (connection, _) in pendingJobs[accepted...] { connection.refuseOverloaded() }
        }
        pendingJobs.removeAll(keepingCapacity: true)
    }

    private func drainInbox() {
        // Swap buffers with the inbox, so neither side allocates per iteration.
        var taken: [Completion] = []
        swap(&taken, &spareCompletions)
        let stop = inbox.withLock { inbox in
            swap(&inbox.completions, &taken)
            return inbox.stopDeadline
        }
        for completion in taken {
            connections[completion.connectionID]?.complete(completion)
        }
        taken.removeAll(keepingCapacity: true)
        swap(&taken, &spareCompletions)
        if let stop, !stopping { beginStop(deadline: stop) }
    }

    private func beginStop(deadline: UInt64) {
        stopping = true
        stopDeadline = deadline
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, listenFD, nil)
        listenerRemoved.signal()
        for connection in Array(connections.values) where connection.isIdleForShutdown { connection.close() }
    }

    private func sweep() {
        for connection in Array(connections.values)
        where connection.deadline != 0 && connection.deadline <= now {
            connection.timedOut()
        }
        if acceptPausedUntil != 0 && now >= acceptPausedUntil && !stopping {
            acceptPausedUntil = 0
            _ = addListener()
        }
    }

    func connectionClosed(_ connection: Connection) {
        connections.removeValue(forKey: connection.id)
        shared.connectionCount.subtract(1, ordering: .relaxed)
        shared.releaseConnection(from: connection.remoteAddress)
    }

    // MARK: Accepting

    /// Accepts pending connections. With several loops each takes one per wake-up, so a
    /// burst of connections is spread over the loops instead of going to whichever woke
    /// first (the listener is level-triggered: the rest wake the next loop).
    private func acceptConnections() {
        var budget = shared.configuration.eventLoopThreads > 1 ? 1 : Int.max
        while !stopping && budget > 0 {
            budget -= 1
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept4(
                        listenFD, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                }
            }
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EAGAIN, EWOULDBLOCK: return
                default:
                    // Out of descriptors or memory: stop accepting briefly instead of spinning.
                    shared.log("event=http.accept_failed errno=\(errno)")
                    _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, listenFD, nil)
                    acceptPausedUntil = now + 100
                    return
                }
            }
            let total = shared.connectionCount.add(1, ordering: .relaxed).newValue
            if total > shared.configuration.maxConnections {
                shared.connectionCount.subtract(1, ordering: .relaxed)
                rejectOverloaded(fd)
                continue
            }
            let address = EventLoop.addressString(storage)
            guard shared.admitConnection(from: address) else {
                shared.connectionCount.subtract(1, ordering: .relaxed)
                rejectOverloaded(fd)
                continue
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            var session: TLSSession?
            if let tls = shared.tls {
                guard let created = tls.makeSession(fd: fd) else {
                    Glibc.close(fd)
                    shared.connectionCount.subtract(1, ordering: .relaxed)
                    shared.releaseConnection(from: address)
                    continue
                }
                session = created
            }
            let id = nextID
            nextID += 1
            let connection = Connection(
                id: id, fd: fd, remoteAddress: address, tls: session, loop: self)
            connections[id] = connection
            let interest = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
            if !register(fd, token: id, events: interest) { connection.close() }
        }
    }

    /// Over `maxConnections` or the per-address limit: a minimal 503 (plain HTTP only) and close, without parsing.
    private func rejectOverloaded(_ fd: Int32) {
        if shared.tls == nil {
            let response: StaticString =
                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            _ = Socket.send(fd, UnsafeRawPointer(response.utf8Start), count: response.utf8CodeUnitCount)
        }
        Glibc.close(fd)
    }

    private func addListener() -> Bool {
        register(listenFD, token: EventLoop.listenerToken, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
    }

    private func register(_ fd: Int32, token: UInt64, events: UInt32) -> Bool {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        return epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0
    }

    // MARK: Helpers

    static func monotonicMillis() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }

    static func addressString(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(storage.ss_family)
        let ok = withUnsafePointer(to: &storage) { pointer -> Bool in
            pointer.withMemoryRebound(to: UInt8.self, capacity: MemoryLayout<sockaddr_storage>.size) { raw in
                if family == AF_INET {
                    return raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                        var ip = address.pointee.sin_addr
                        return inet_ntop(AF_INET, &ip, &buffer, socklen_t(buffer.count)) != nil
                    }
                } else if family == AF_INET6 {
                    return raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                        var ip = address.pointee.sin6_addr
                        return inet_ntop(AF_INET6, &ip, &buffer, socklen_t(buffer.count)) != nil
                    }
                }
                return false
            }
        }
        guard ok else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
