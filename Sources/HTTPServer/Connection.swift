import COpenSSL
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// One client connection, owned by its event loop and touched only on the loop's thread.
/// It reads and parses bytes until a request is complete, hands that request to the worker
/// pool and, once the response is written, parses the next (pipelined) request. One request
/// per connection is in flight at a time, which keeps responses in order.
///
/// On plain connections the worker writes the response itself (the loop does not touch the
/// socket while a request is in flight), so the send, the costliest system call of a
/// request, runs in parallel with the loop; the loop then only learns how much was written.
/// TLS responses are written by the loop.
final class Connection {
    enum State { case reading, processing, writing, lingering, closed }

    let id: UInt64
    let fd: Int32
    /// Shared with the worker running this connection's request (plain connections only).
    private let socket: SharedSocket?
    let remoteAddress: String
    unowned let loop: EventLoop
    private var tls: TLSSession?
    private var handshakeDone: Bool
    private var input = InputBuffer()
    private var parser: RequestParser
    private(set) var state = State.reading
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var closeAfterWrite = false
    /// Edge-triggered epoll: whether the socket (or OpenSSL) may still hold unread bytes.
    private var readable = true
    /// Monotonic milliseconds after which the connection is closed; 0 while a handler runs.
    private(set) var deadline: UInt64 = 0
    private var deadlinePhase: RequestParser.Phase?
    private var requestCount = 0
    /// The `requestCount` whose head has begun (its deadline set): empty lines skipped before
    /// a request line empty the buffer again without starting a new request's time.
    private var headBegun: Int?
    private var lingerBytes = 0
    private var lingerOnClose = false

    init(id: UInt64, fd: Int32, remoteAddress: String, tls: TLSSession?, loop: EventLoop) {
        self.id = id
        self.fd = fd
        self.socket = tls == nil ? SharedSocket(fd: fd) : nil
        self.remoteAddress = remoteAddress
        self.tls = tls
        self.handshakeDone = tls == nil
        self.loop = loop
        let configuration = loop.shared.configuration
        parser = RequestParser(
            maxHeaderBytes: configuration.maxHeaderBytes, maxBodyBytes: configuration.maxBodyBytes)
        deadline = loop.now + loop.shared.headerTimeoutMillis
    }

    // MARK: Events

    func handle(events: UInt32) {
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            readable = true
        }
        if !handshakeDone {
            guard let tls else { return }
            switch tls.handshake() {
            case .done:
                handshakeDone = true
                readable = true
            case .wouldBlock: return
            case .failed:
                close()
                return
            }
        }
        switch state {
        case .reading: drive()
        case .writing: flush()
        case .lingering: drainLinger()
        case .processing, .closed: break
        }
    }

    /// Called by the loop when `deadline` has passed: header, body, idle or write timeout.
    func timedOut() {
        close()
    }

    // MARK: Reading

    private func drive() {
        while state == .reading {
            if input.count > 0 {
                let request: ParsedRequest?
                do {
                    request = try parser.parse(&input)
                } catch {
                    reject(error.status, reason: error.reason)
                    return
                }
                if let request {
                    dispatch(request)
                    return
                }
                if parser.continueRequested {
                    parser.continueRequested = false
                    sendContinue()
                }
            }
            updateReadDeadline()
            guard readable else { return }
            switch readSome() {
            case .bytes: continue
            case .wouldBlock:
                readable = false
                return
            case .closed, .failed:
                close()
                return
            }
        }
    }

    private func updateReadDeadline() {
        let phase = parser.phase(bufferedBytes: input.count)
        guard phase != deadlinePhase else { return }
        deadlinePhase = phase
        let shared = loop.shared
        switch phase {
        case .idle:
            // Back to an empty buffer within one head (its leading empty lines were skipped):
            // the head's deadline stands.
            guard headBegun != requestCount else { return }
            deadline = loop.now + (requestCount == 0 ? shared.headerTimeoutMillis : shared.idleTimeoutMillis)
        case .head:
            guard headBegun != requestCount else { return }
            headBegun = requestCount
            deadline = loop.now + shared.headerTimeoutMillis
        case .body: deadline = loop.now + shared.bodyTimeoutMillis
        }
    }

    private func readSome() -> IOResult {
        input.compact()
        let scratch = loop.scratch
        let result: IOResult
        if let tls {
            result = tls.read(into: scratch.baseAddress!, count: scratch.count)
        } else {
            result = Socket.receive(fd, into: scratch)
            if case .bytes(let n) = result, n < scratch.count { readable = false }
        }
        if case .bytes(let n) = result {
            input.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
        }
        return result
    }

    private func sendContinue() {
        let interim: StaticString = "HTTP/1.1 100 Continue\r\n\r\n"
        _ = write(UnsafeRawPointer(interim.utf8Start), count: interim.utf8CodeUnitCount)
    }

    // MARK: Handing over to the workers

    private func dispatch(_ parsed: ParsedRequest) {
        let head = parsed.head
        let split = HTTPRequest.splitTarget(head.target)
        let decodedPath =
            head.target == "*" ? "*" : PercentDecoding.decode(split.path.utf8, plusAsSpace: false)
        guard let path = decodedPath, !path.utf8.contains(0) else {
            reject(.badRequest, reason: "badPath")
            return
        }
        let request = HTTPRequest(
            method: head.method, target: head.target, path: path, rawQuery: split.query.map(String.init),
            headers: head.headers, body: parsed.body, remoteAddress: remoteAddress)
        requestCount += 1
        state = .processing
        deadline = 0
        deadlinePhase = nil
        let loop = self.loop
        let id = self.id
        let keepAlive = head.keepAlive && !loop.stopping
        let minorVersion = head.minorVersion
        let receivedAt = ContinuousClock.now
        let socket = self.socket
        loop.enqueue(self) { worker in
            loop.shared.process(
                request, keepAlive: keepAlive, minorVersion: minorVersion, receivedAt: receivedAt, worker: &worker
            ) { bytes, close in
                var written = 0
                var failed = false
                if let socket {
                    switch socket.send(bytes) {
                    case .bytes(let n): written = n
                    case .wouldBlock: break
                    case .closed, .failed: failed = true
                    }
                }
                loop.post(
                    Completion(connectionID: id, bytes: bytes, written: written, close: close, writeFailed: failed))
            }
        }
    }

    /// The worker queue had no room for the request handed over by `dispatch`.
    func refuseOverloaded() {
        guard state == .processing else { return }
        state = .reading
        reject(.serviceUnavailable, reason: "workerQueueFull")
    }

    /// The worker's serialized response for the request in flight, possibly (partly) written.
    func complete(_ completion: Completion) {
        guard state == .processing else { return }
        if completion.writeFailed {
            close()
            return
        }
        output = completion.bytes
        outputOffset = min(completion.written, completion.bytes.count)
        closeAfterWrite = completion.close || loop.stopping
        state = .writing
        flush()
    }

    /// Answers a request the loop refuses itself, then closes.
    private func reject(_ status: HTTPStatus, reason: String) {
        loop.shared.log(
            "event=http.rejected status=\(status.code) reason=\(reason) remote=\(remoteAddress)")
        output = ResponseSerializer.errorResponse(status)
        outputOffset = 0
        closeAfterWrite = true
        lingerOnClose = true
        state = .writing
        flush()
    }

    // MARK: Writing

    private func flush() {
        while outputOffset < output.count {
            let result = output.withUnsafeBytes { bytes -> IOResult in
                guard let base = bytes.baseAddress else { return .failed }
                return write(base + outputOffset, count: bytes.count - outputOffset)
            }
            switch result {
            case .bytes(let n): outputOffset += n
            case .wouldBlock:
                deadline = loop.now + loop.shared.idleTimeoutMillis
                return
            case .closed, .failed:
                close()
                return
            }
        }
        output = []
        outputOffset = 0
        if closeAfterWrite {
            // Linger only when the client may still be sending (refused or pipelined input).
            if lingerOnClose || input.count > 0 || readable {
                beginLingeringClose()
            } else {
                tls?.shutdown()
                close()
            }
        } else if loop.stopping {
            close()
        } else {
            state = .reading
            deadlinePhase = nil
            drive()
        }
    }

    private func write(_ pointer: UnsafeRawPointer, count: Int) -> IOResult {
        if let tls { return tls.write(from: pointer, count: count) }
        return Socket.send(fd, pointer, count: count)
    }

    // MARK: Closing

    /// Half-closes and discards what the client still sends for a moment, so that unread
    /// request bytes do not turn the close into a reset that destroys the error response.
    private func beginLingeringClose() {
        tls?.shutdown()
        Glibc.shutdown(fd, Int32(SHUT_WR))
        state = .lingering
        deadline = loop.now + min(2000, loop.shared.idleTimeoutMillis)
        drainLinger()
    }

    private func drainLinger() {
        while state == .lingering {
            switch Socket.receive(fd, into: loop.scratch) {
            case .bytes(let n):
                lingerBytes += n
                if lingerBytes > 1 << 20 { close() }
            case .wouldBlock: return
            case .closed, .failed: close()
            }
        }
    }

    /// Whether graceful shutdown may close this connection now (no request in flight).
    var isIdleForShutdown: Bool { state == .reading || state == .lingering }

    func close() {
        guard state != .closed else { return }
        state = .closed
        tls?.free()
        tls = nil
        if let socket {
            socket.close()
        } else {
            Glibc.close(fd)
        }
        loop.connectionClosed(self)
    }
}

/// The descriptor of a plain connection, shared by its loop and the worker that writes a
/// response. The lock makes "write if still open" and "close" exclusive, so a worker never
/// writes to a descriptor that was closed (and perhaps reused) meanwhile, as can happen when
/// shutdown closes connections whose handlers are still running.
final class SharedSocket: Sendable {
    let fd: Int32
    private let open = Mutex(true)

    init(fd: Int32) { self.fd = fd }

    func send(_ bytes: [UInt8]) -> IOResult {
        open.withLock { open in
            guard open else { return .closed }
            return bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return .bytes(0) }
                return Socket.send(fd, base, count: buffer.count)
            }
        }
    }

    func close() {
        open.withLock { open in
            guard open else { return }
            open = false
            Glibc.close(fd)
        }
    }
}

/// Nonblocking socket calls mapped to `IOResult`.
enum Socket {
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed
            }
        }
    }

    static func send(_ fd: Int32, _ pointer: UnsafeRawPointer, count: Int) -> IOResult {
        while true {
            let n = Glibc.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return .bytes(n) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed
            }
        }
    }
}
