import Foundation

/// A complete response. The server adds `Content-Length`, `Date`, `Connection` and
/// `X-Request-ID` when writing it, so handlers set only what is specific to them.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPFields
    public var body: [UInt8]

    public init(status: HTTPStatus = .ok, headers: HTTPFields = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ s: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(s.utf8))
    }

    /// A `text/html; charset=utf-8` response; the caller is responsible for escaping.
    public static func html(_ s: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(s.utf8))
    }

    /// An `application/json` response with sorted keys and unescaped slashes, so output is
    /// stable (tests, caches) and URLs stay readable.
    public static func json<T: Encodable>(_ value: T, status: HTTPStatus = .ok) throws -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(data))
    }

    /// A redirect with an empty body; `.seeOther` by default, so a POST is followed by a GET.
    public static func redirect(to location: String, status: HTTPStatus = .seeOther) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Location": location])
    }

    /// Appends a `Set-Cookie` header (one per cookie, never folded).
    public mutating func setCookie(_ c: Cookie) {
        headers.append("Set-Cookie", c.headerValue)
    }
}
