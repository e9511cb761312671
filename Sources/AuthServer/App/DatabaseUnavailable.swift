import HTTPServer
import OIDC
import Postgres

extension PostgresError {
    /// The database cannot be reached, is shutting down or has no free connection: a
    /// temporary condition the client may retry (503), not a fault of the request (400) or of
    /// the server's code (500).
    var isUnavailable: Bool { kind == .connectionFailure || kind == .adminShutdown || kind == .poolTimeout }
}

/// Turns an unavailable database that reaches the router into 503 with `Retry-After`, so a
/// handler that lets the error through answers like the ones that catch it.
struct DatabaseUnavailable: HTTPMiddleware {
    func handle(
        _ request: HTTPRequest, context: inout RequestContext,
        next: (HTTPRequest, inout RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        do {
            return try next(request, &context)
        } catch let error as PostgresError where error.isUnavailable {
            var response = HTTPResponse.text("database unavailable\n", status: .serviceUnavailable)
            response.headers.set("Retry-After", "2")
            return response
        }
    }
}

extension OAuthServices {
    /// The OAuth error for an unexpected failure: `temporarily_unavailable` (503) while the
    /// database is unavailable, `server_error` (500) otherwise.
    static func failure(_ error: any Error) -> OAuthError {
        if let error = error as? PostgresError, error.isUnavailable {
            return OAuthError(.temporarilyUnavailable, hint: "")
        }
        return OAuthError(.serverError, hint: "")
    }
}
