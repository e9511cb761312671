/// Per-request state passed along the middleware chain to the handler.
public struct RequestContext: Sendable {
    /// Random 16 hex characters, echoed as `X-Request-ID` and in the access log.
    public let requestID: String
    public var pathParameters: [String: String]
    /// The matched route pattern (for metrics: bounded cardinality, unlike the path).
    public var route: String?
    public let receivedAt: ContinuousClock.Instant

    public init(
        requestID: String = RequestContext.makeRequestID(), pathParameters: [String: String] = [:],
        route: String? = nil, receivedAt: ContinuousClock.Instant = .now
    ) {
        self.requestID = requestID
        self.pathParameters = pathParameters
        self.route = route
        self.receivedAt = receivedAt
    }

    /// A fresh random request id (16 lowercase hex characters).
    public static func makeRequestID() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex16(generator.next())
    }

    static func hex16(_ value: UInt64) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 16) { buffer in
            digits.withUTF8Buffer { d in
                for i in 0..<16 { buffer[i] = d[Int((value >> UInt64(60 - 4 * i)) & 0xF)] }
            }
            return 16
        }
    }
}

/// Turns a request into a response. Synchronous on purpose: handlers run on the server's
/// worker threads and may block (database, password hashing) without stalling the event loop.
public protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest, context: inout RequestContext) throws -> HTTPResponse
}

/// Wraps the rest of the chain: may change the request, short-circuit, or change the response.
public protocol HTTPMiddleware: Sendable {
    func handle(
        _ request: HTTPRequest, context: inout RequestContext,
        next: (HTTPRequest, inout RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse
}
