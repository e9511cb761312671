import Synchronization

/// What the event loops and workers of one server share. Immutable apart from the atomic
/// connection counter, hence truly `Sendable`.
final class ServerShared: Sendable {
    let configuration: HTTPServer.Configuration
    let responder: any HTTPResponder
    let log: @Sendable (String) -> Void
    let onResponse: (@Sendable (HTTPRequest, RequestContext, HTTPStatus, Duration) -> Void)?
    let tls: TLSContext?
    let pool: WorkerPool
    let connectionCount = Atomic<Int>(0)
    private let connectionsPerAddress: Mutex<AddressConnectionCounts>
    /// Set when shutdown begins, so responses produced from then on announce `Connection: close`.
    let stopping = Atomic<Bool>(false)
    let headerTimeoutMillis: UInt64
    let bodyTimeoutMillis: UInt64
    let idleTimeoutMillis: UInt64
    let sweepIntervalMillis: UInt64

    init(
        configuration: HTTPServer.Configuration, responder: any HTTPResponder,
        log: @escaping @Sendable (String) -> Void,
        onResponse: (@Sendable (HTTPRequest, RequestContext, HTTPStatus, Duration) -> Void)?, tls: TLSContext?
    ) {
        self.configuration = configuration
        self.responder = responder
        self.log = log
        self.onResponse = onResponse
        self.tls = tls
        connectionsPerAddress = Mutex(AddressConnectionCounts(limit: configuration.maxConnectionsPerAddress))
        pool = WorkerPool(
            threads: max(1, configuration.workerThreads), capacity: max(1, configuration.maxQueuedRequests))
        headerTimeoutMillis = ServerShared.millis(configuration.headerReadTimeout)
        bodyTimeoutMillis = ServerShared.millis(configuration.bodyReadTimeout)
        idleTimeoutMillis = ServerShared.millis(configuration.idleTimeout)
        let shortest = min(headerTimeoutMillis, bodyTimeoutMillis, idleTimeoutMillis)
        sweepIntervalMillis = min(max(shortest / 4, 10), 1000)
    }

    /// Counts a new connection from `address`; false when that address is at its limit.
    func admitConnection(from address: String) -> Bool {
        if isExempt(address) { return true }
        return connectionsPerAddress.withLock { $0.admit(address) }
    }

    /// Forgets a connection that `admitConnection(from:)` let in.
    func releaseConnection(from address: String) {
        if isExempt(address) { return }
        connectionsPerAddress.withLock { $0.release(address) }
    }

    private func isExempt(_ address: String) -> Bool {
        configuration.connectionLimitExemptions.contains { $0.contains(address) }
    }

    static func millis(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds) / 1_000_000_000_000_000)
    }

    /// Runs the responder on a worker thread, serializes its response, writes the access log
    /// and calls `onResponse`, then hands the bytes to `deliver`: a client that has the
    /// response can rely on both having happened. Errors render themselves; anything else is
    /// a generic 500 with the detail only in the log.
    func process(
        _ request: HTTPRequest, keepAlive: Bool, minorVersion: Int, receivedAt: ContinuousClock.Instant,
        worker: inout WorkerState, deliver: (_ bytes: [UInt8], _ close: Bool) -> Void
    ) {
        var context = RequestContext(
            requestID: RequestContext.hex16(worker.nextRandom()), receivedAt: receivedAt)
        var response: HTTPResponse
        do {
            response = try responder.respond(to: request, context: &context)
        } catch let error as any HTTPResponseError {
            response = error.response()
        } catch {
            log(
                "event=http.handler_error request_id=\(context.requestID) method=\(request.method.rawValue) "
                    + "path=\(ServerShared.loggablePath(request.path)) error=\(String(reflecting: error))")
            response = .text("Internal Server Error", status: .internalServerError)
        }
        let close =
            !keepAlive || stopping.load(ordering: .relaxed) || ResponseSerializer.requestsClose(response)
        let bytes = ResponseSerializer.serialize(
            response, requestID: context.requestID, keepAlive: !close, minorVersion: minorVersion,
            omitBody: request.method == .head, date: worker.dateBytes())
        let duration = ContinuousClock.now - receivedAt
        log(
            ServerShared.accessLogLine(
                requestID: context.requestID, method: request.method, path: request.path,
                status: response.status.code, duration: duration, bytes: response.body.count,
                remote: request.remoteAddress))
        onResponse?(request, context, response.status, duration)
        deliver(bytes, close)
    }

    /// `event=http.request request_id=… method=… path=… status=… duration_ms=… bytes=… remote=…`,
    /// built as bytes (this runs for every request).
    static func accessLogLine(
        requestID: String, method: HTTPMethod, path: String, status: Int, duration: Duration, bytes: Int,
        remote: String
    ) -> String {
        var line = [UInt8]()
        line.reserveCapacity(160 + path.utf8.count)
        line.appendLiteral("event=http.request request_id=")
        line.appendUTF8(requestID)
        line.appendLiteral(" method=")
        line.appendUTF8(method.rawValue)
        line.appendLiteral(" path=")
        appendLoggablePath(path, to: &line)
        line.appendLiteral(" status=")
        ResponseSerializer.appendDecimal(status, to: &line)
        line.appendLiteral(" duration_ms=")
        let (seconds, attoseconds) = duration.components
        let hundredths = Int(max(0, seconds) * 100_000 + max(0, attoseconds) / 10_000_000_000_000)
        ResponseSerializer.appendDecimal(hundredths / 100, to: &line)
        line.append(46)
        line.append(UInt8(48 + hundredths % 100 / 10))
        line.append(UInt8(48 + hundredths % 10))
        line.appendLiteral(" bytes=")
        ResponseSerializer.appendDecimal(bytes, to: &line)
        line.appendLiteral(" remote=")
        line.appendUTF8(remote)
        return String(decoding: line, as: UTF8.self)
    }

    private static func appendLoggablePath(_ path: String, to out: inout [UInt8]) {
        let hex: StaticString = "0123456789ABCDEF"
        for byte in path.utf8 {
            if byte <= 32 || byte == 127 || byte == 34 || byte == 37 {
                out.append(37)
                out.append(hex.utf8Start[Int(byte >> 4)])
                out.append(hex.utf8Start[Int(byte & 15)])
            } else {
                out.append(byte)
            }
        }
    }

    /// The decoded path with spaces, controls, quotes and `%` escaped so one request stays
    /// one log line. Never includes the query (it may carry authorization codes).
    static func loggablePath(_ path: String) -> String {
        var out = [UInt8]()
        appendLoggablePath(path, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Open connections per client address, against one limit.
struct AddressConnectionCounts: Sendable {
    let limit: Int
    private var counts: [String: Int] = [:]

    init(limit: Int) { self.limit = limit }

    /// Counts one more connection from `address`, unless it already holds `limit`.
    mutating func admit(_ address: String) -> Bool {
        let current = counts[address, default: 0]
        guard current < limit else { return false }
        counts[address] = current + 1
        return true
    }

    mutating func release(_ address: String) {
        guard let current = counts[address] else { return }
        counts[address] = current > 1 ? current - 1 : nil
    }

    func count(_ address: String) -> Int { counts[address, default: 0] }
}
