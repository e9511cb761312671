import Foundation

/// An error that knows the response it becomes. The server renders any thrown error
/// conforming to this protocol with `response()`; every other error becomes a generic 500
/// whose detail goes only to the log.
public protocol HTTPResponseError: Error {
    var status: HTTPStatus { get }
    func response() -> HTTPResponse
}

extension HTTPResponseError {
    public func response() -> HTTPResponse {
        HTTPResponse.text(status.reasonPhrase, status: status)
    }
}

/// A plain HTTP error with a client-visible message (never put secrets or internals in it).
public struct HTTPError: HTTPResponseError, Sendable, Equatable, CustomStringConvertible {
    public enum Format: Sendable, Equatable { case text, json }

    public var status: HTTPStatus
    public var message: String
    public var format: Format
    /// Extra headers for the error response (`Allow`, `WWW-Authenticate`, `Retry-After` …).
    public var headers: HTTPFields

    public init(
        _ status: HTTPStatus, message: String? = nil, format: Format = .text, headers: HTTPFields = [:]
    ) {
        self.status = status
        self.message = message ?? status.reasonPhrase
        self.format = format
        self.headers = headers
    }

    /// The response: `message` as text, or `{"error": message}` as JSON.
    public func response() -> HTTPResponse {
        var response: HTTPResponse
        switch format {
        case .text:
            response = .text(message, status: status)
        case .json:
            response = (try? .json(["error": message], status: status)) ?? .text(message, status: status)
        }
        for field in headers { response.headers.set(field.name, field.value) }
        return response
    }

    public var description: String { "HTTPError(\(status.code), \(message))" }
}
