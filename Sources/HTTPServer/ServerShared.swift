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
        pool = WorkerPool(
            threads: max(1, configuration.workerThreads), capacity: max(1, configuration.maxQueuedRequests))
        headerTimeoutMillis = ServerShared.millis(configuration.headerReadTimeout)
        bodyTimeoutMillis = ServerShared.millis(configuration.bodyReadTimeout)
        idleTimeoutMillis = ServerShared.millis(configuration.idleTimeout)
        let shortest = min(headerTimeoutMillis, bodyTimeoutMillis, idleTimeoutMillis)
        sweepIntervalMillis = min(max(shortest / 4, 10), 1000)
    }

    static func millis(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds) / 1_000_000_000_000_000)
    }

    /// Runs the responder on a worker thread and serializes its response. Errors render
    /// themselves; anything else is a generic 500 with the detail only in the log.
    func process(
        _ request: HTTPRequest, keepAlive: Bool, minorVersion: Int, receivedAt: ContinuousClock.Instant,
        worker: inout WorkerState
    ) -> (bytes: [UInt8], close: Bool) {
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
            omitBody: request.method == .head)
        let duration = ContinuousClock.now - receivedAt
        log(
            "event=http.request request_id=\(context.requestID) method=\(request.method.rawValue) "
                + "path=\(ServerShared.loggablePath(request.path)) status=\(response.status.code) "
                + "duration_ms=\(ServerShared.formatMillis(duration)) bytes=\(response.body.count) "
                + "remote=\(request.remoteAddress)")
        onResponse?(request, context, response.status, duration)
        return (bytes, close)
    }

    /// The decoded path with spaces, controls, quotes and `%` escaped so one request stays
    /// one log line. Never includes the query (it may carry authorization codes).
    static func loggablePath(_ path: String) -> String {
        guard path.utf8.contains(where: { $0 <= 32 || $0 == 127 || $0 == 34 || $0 == 37 }) else {
            return path
        }
        let hex = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        for byte in path.utf8 {
            if byte <= 32 || byte == 127 || byte == 34 || byte == 37 {
                out += [37, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Milliseconds with two decimals, without `String(format:)`.
    static func formatMillis(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let hundredths = max(0, seconds) * 100_000 + max(0, attoseconds) / 10_000_000_000_000
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction < 10 ? "0\(fraction)" : "\(fraction)")
    }
}
