import COpenSSL
#if canImport(Glibc)
    import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// Why the server could not start.
public enum HTTPServerError: Error, CustomStringConvertible, Equatable {
    case addressInUse(host: String, port: Int)
    case invalidAddress(String)
    case alreadyStarted
    case tls(String)
    case system(String, Int32)

    public var description: String {
        switch self {
        case .addressInUse(let host, let port): "address \(host):\(port) is already in use"
        case .invalidAddress(let host): "not a numeric IPv4/IPv6 address: \(host)"
        case .alreadyStarted: "server already started"
        case .tls(let detail): "TLS setup failed: \(detail)"
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        }
    }
}

/// An HTTP/1.1 server: epoll event loops parse requests and write responses, a fixed worker
/// pool runs the (synchronous, possibly blocking) responder. Workers only ever see complete
/// requests, so slow clients cost a file descriptor and a small buffer, never a thread.
///
/// Thread safety: all mutable state is in `phase` (a `Mutex`); loops and workers share only
/// the immutable `ServerShared`.
public final class HTTPServer: Sendable {
    public struct Configuration: Sendable {
        /// Numeric IPv4 or IPv6 address (or "localhost").
        public var host: String
        /// 0 picks an ephemeral port; read the bound one from `HTTPServer.port`.
        public var port: Int
        /// Request line plus headers; more is answered with 431.
        public var maxHeaderBytes: Int
        /// Request body (after de-chunking); more is answered with 413.
        public var maxBodyBytes: Int
        /// Open connections; further ones get a minimal 503 and are closed.
        public var maxConnections: Int
        /// Open connections from one client address; further ones are refused like those
        /// over `maxConnections`, so that one client cannot take every slot.
        public var maxConnectionsPerAddress: Int
        /// Peers with no per-address limit (reverse proxies, which carry many clients).
        public var connectionLimitExemptions: [AddressRange]
        /// Threads running the responder. Twice the cores by default: more threads than that
        /// contend for the cores with each other and the database (on 2 cores, 8 workers
        /// instead of 4 raised the p99 of token grants from 8–18 to 15–57 ms and of /authorize
        /// at 70 % of saturation from 2–3 to 4–10 ms, for at most 5 % more throughput; see
        /// bench/NOTES.md), while handlers blocked on the database gain from them only when
        /// its latency rises.
        public var workerThreads: Int
        /// Requests waiting for a worker; when full, new requests get 503.
        public var maxQueuedRequests: Int
        /// epoll threads. One is enough for most loads: workers run the handlers and write
        /// plain responses, so a loop only reads, parses and hands over (a loop used about a
        /// sixth of a core at 13 000 requests/s). More spread that work over cores.
        public var eventLoopThreads: Int
        /// Time allowed for a whole request head once it starts (and for a new connection's first byte).
        public var headerReadTimeout: Duration
        /// Time allowed for a whole request body once the head is in.
        public var bodyReadTimeout: Duration
        /// Keep-alive time between requests, and the write-stall timeout. Short, so that
        /// idle connections do not pile up against the connection limits.
        public var idleTimeout: Duration
        public var tls: TLSConfiguration?

        public init(
            host: String = "127.0.0.1", port: Int = 8080, maxHeaderBytes: Int = 16_384,
            maxBodyBytes: Int = 1_048_576, maxConnections: Int = 4096, maxConnectionsPerAddress: Int = 64,
            connectionLimitExemptions: [AddressRange] = [],
            workerThreads: Int = max(4, ProcessInfo.processInfo.activeProcessorCount * 2),
            maxQueuedRequests: Int = 1024, eventLoopThreads: Int = 1,
            headerReadTimeout: Duration = .seconds(10),
            bodyReadTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(10),
            tls: TLSConfiguration? = nil
        ) {
            self.host = host
            self.port = port
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
            self.maxConnections = maxConnections
            self.maxConnectionsPerAddress = maxConnectionsPerAddress
            self.connectionLimitExemptions = connectionLimitExemptions
            self.workerThreads = workerThreads
            self.maxQueuedRequests = maxQueuedRequests
            self.eventLoopThreads = eventLoopThreads
            self.headerReadTimeout = headerReadTimeout
            self.bodyReadTimeout = bodyReadTimeout
            self.idleTimeout = idleTimeout
            self.tls = tls
        }
    }

    /// PEM files for HTTPS. The protocol policy is fixed (see `TLSContext`): TLS 1.2 and
    /// 1.3 only, forward-secret AEAD ciphers only, no renegotiation.
    public struct TLSConfiguration: Sendable {
        public var certificateFile: String
        public var privateKeyFile: String

        public init(certificateFile: String, privateKeyFile: String) {
            self.certificateFile = certificateFile
            self.privateKeyFile = privateKeyFile
        }
    }

    private struct Running: @unchecked Sendable {
        // DispatchGroup is thread-safe; the struct only travels inside `phase`.
        var shared: ServerShared
        var loops: [EventLoop]
        var listenFD: Int32
        var port: Int
        var loopsFinished: DispatchGroup
    }

    private enum Phase {
        case idle
        case running(Running)
        case stopping(port: Int)
        case stopped(port: Int)
    }

    public let configuration: Configuration
    private let responder: any HTTPResponder
    private let log: @Sendable (String) -> Void
    private let onResponse: (@Sendable (HTTPRequest, RequestContext, HTTPStatus, Duration) -> Void)?
    private let phase = Mutex(Phase.idle)
    /// Entered by `start()`, left when shutdown completes; `waitUntilStopped()` waits on it.
    private let lifetime = LifetimeLatch()
    private let signalSources = Mutex<[SignalSource]>([])

    /// - Parameters:
    ///   - log: receives one `key=value` line per request and server event (never query strings).
    ///   - onResponse: called on the worker thread after each response is produced (for metrics).
    public init(
        configuration: Configuration, responder: any HTTPResponder,
        log: @escaping @Sendable (String) -> Void = { print($0) },
        onResponse: (@Sendable (HTTPRequest, RequestContext, HTTPStatus, Duration) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.responder = responder
        self.log = log
        self.onResponse = onResponse
    }

    /// Binds, listens and starts the event loops and workers, then returns.
    public func start() throws {
        try phase.withLock { phase throws(HTTPServerError) in
            guard case .idle = phase else { throw .alreadyStarted }
            // Writes to a peer that went away must fail with EPIPE, not kill the process.
            signal(SIGPIPE, SIG_IGN)
            let tls = try configuration.tls.map { tls throws(HTTPServerError) in
                try TLSContext(certificateFile: tls.certificateFile, privateKeyFile: tls.privateKeyFile)
            }
            let (listenFD, port) = try Listener.open(host: configuration.host, port: configuration.port)
            let shared = ServerShared(
                configuration: configuration, responder: responder, log: log, onResponse: onResponse, tls: tls
            )
            var loops: [EventLoop] = []
            do throws(HTTPServerError) {
                for _ in 0..<max(1, configuration.eventLoopThreads) {
                    loops.append(try EventLoop(shared: shared, listenFD: listenFD))
                }
            } catch {
                Glibc.close(listenFD)
                shared.pool.stop()
                throw error
            }
            let finished = DispatchGroup()
            for (index, loop) in loops.enumerated() {
                finished.enter()
                let thread = Thread {
                    loop.run()
                    finished.leave()
                }
                thread.name = "http-loop-\(index)"
                thread.start()
            }
            lifetime.enter()
            phase = .running(
                Running(shared: shared, loops: loops, listenFD: listenFD, port: port, loopsFinished: finished)
            )
            log("event=http.listening host=\(configuration.host) port=\(port) tls=\(tls != nil)")
        }
    }

    /// The bound port (useful with port 0); 0 before `start()`.
    public var port: Int {
        phase.withLock { phase in
            switch phase {
            case .idle: 0
            case .running(let running): running.port
            case .stopping(let port), .stopped(let port): port
            }
        }
    }

    /// Stops accepting (closes the listener), lets in-flight requests finish and their
    /// responses be written, closes idle keep-alive connections, then stops all threads.
    /// Connections still busy after `gracePeriod` are closed and handlers still running then
    /// are no longer waited for. Blocks until done; safe to call
    /// more than once and from any thread.
    public func shutdown(gracePeriod: Duration = .seconds(10)) {
        let running: Running? = phase.withLock { phase in
            guard case .running(let running) = phase else { return nil }
            phase = .stopping(port: running.port)
            return running
        }
        guard let running else {
            waitUntilStopped()
            return
        }
        log("event=http.stopping grace_ms=\(ServerShared.millis(gracePeriod))")
        let deadline = EventLoop.monotonicMillis() + ServerShared.millis(gracePeriod)
        running.shared.stopping.store(true, ordering: .relaxed)
        for loop in running.loops { loop.requestStop(deadline: deadline) }
        for loop in running.loops { loop.listenerRemoved.wait() }
        Glibc.close(running.listenFD)
        running.loopsFinished.wait()
        let remaining = deadline > EventLoop.monotonicMillis() ? deadline - EventLoop.monotonicMillis() : 0
        if !running.shared.pool.stop(deadline: .now() + .milliseconds(Int(remaining) + 100)) {
            log("event=http.stop_incomplete reason=handlersStillRunning")
        }
        phase.withLock { $0 = .stopped(port: running.port) }
        log("event=http.stopped")
        lifetime.leave()
    }

    /// Blocks until a started server has completely shut down (returns at once if never started).
    public func waitUntilStopped() {
        lifetime.wait()
    }

    /// Shuts down gracefully when one of `signals` arrives. The signals' default actions are
    /// replaced with SIG_IGN so that only the dispatch sources see them.
    public func stopOnSignals(_ signals: [Int32] = [SIGTERM, SIGINT]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                log("event=http.signal signal=\(number)")
                shutdown()
            }
            source.resume()
            let retained = SignalSource(source: source)
            signalSources.withLock { $0.append(retained) }
        }
    }
}

/// Keeps a signal source alive; dispatch sources are thread-safe.
private struct SignalSource: @unchecked Sendable {
    let source: any DispatchSourceSignal
}

/// A count of running lifetimes that can be waited on from many threads.
private final class LifetimeLatch: Sendable {
    private let state = Mutex<Int>(0)
    private let condition = Mutex<[DispatchSemaphore]>([])

    func enter() { state.withLock { $0 += 1 } }

    func leave() {
        let waiters: [DispatchSemaphore] = state.withLock { count in
            count -= 1
            guard count == 0 else { return [] }
            return condition.withLock { waiters in
                defer { waiters.removeAll() }
                return waiters
            }
        }
        for waiter in waiters { waiter.signal() }
    }

    func wait() {
        let semaphore = DispatchSemaphore(value: 0)
        let mustWait = state.withLock { count in
            guard count > 0 else { return false }
            condition.withLock { $0.append(semaphore) }
            return true
        }
        if mustWait { semaphore.wait() }
    }
}

/// The listening socket.
enum Listener {
    static func open(host: String, port: Int) throws(HTTPServerError) -> (fd: Int32, port: Int) {
        guard (0...65535).contains(port) else { throw .invalidAddress("\(host):\(port)") }
        let numericHost = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, numericHost, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(port).bigEndian
        } else if inet_pton(AF_INET6, numericHost, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(port).bigEndian
        } else {
            throw .invalidAddress(host)
        }
        let fd = socket(
            family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32 =
            family == AF_INET
            ? withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            : withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        if bound != 0 {
            let code = errno
            Glibc.close(fd)
            if code == EADDRINUSE { throw .addressInUse(host: host, port: port) }
            throw .system("bind", code)
        }
        guard listen(fd, SOMAXCONN) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system("listen", code)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let boundPort: Int =
            family == AF_INET
            ? withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    Int(in_port_t(bigEndian: $0.pointee.sin_port))
                }
            }
            : withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(in_port_t(bigEndian: $0.pointee.sin6_port))
                }
            }
        return (fd, boundPort)
    }
}
