import HTTPServer
import OIDC

extension OAuthError {
    /// The error answered directly in JSON (RFC 6749 §5.2): `Cache-Control: no-store`,
    /// `Pragma: no-cache`, the `WWW-Authenticate` challenge of a failed HTTP Basic
    /// authentication, and the `DPoP-Nonce` a DPoP client must use (RFC 9449 §8).
    func response() -> HTTPResponse {
        var response = HTTPResponse(status: HTTPStatus(code: status), body: jsonBody)
        response.headers.set("Content-Type", "application/json")
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("Pragma", "no-cache")
        if let challenge = wwwAuthenticate { response.headers.set("WWW-Authenticate", challenge) }
        if let nonce = dpopNonce { response.headers.set("DPoP-Nonce", nonce) }
        return response
    }
}

/// Registration of the OAuth endpoints that answer in JSON (/token, /revoke, /introspect):
/// a handler returns its answer or throws; an `OAuthError` is answered as itself, anything
/// else as a logged `server_error` (or `temporarily_unavailable` while the database is) with
/// a generic body. The error is answered here, not thrown to the server, so that it passes
/// through the middleware (security headers) like any answer.
struct OAuthEndpoints {
    let router: Router
    let log: Log

    typealias Handler = @Sendable (HTTPRequest) throws -> HTTPResponse

    /// A POST endpoint; its path without the slash names it in the log (`step=token`).
    func post(_ path: String, _ handler: @escaping Handler) {
        let log = log
        let step = String(path.dropFirst())
        router.post(path) { request, _ in
            do {
                return try handler(request)
            } catch {
                return Self.answer(error, step: step, log: log)
            }
        }
    }

    /// The answer to a refused or failed request. Client authentication failures and
    /// server errors are logged with their `debug` detail, which the answer never carries.
    static func answer(_ error: any Error, step: String, log: Log) -> HTTPResponse {
        if let error = error as? OAuthError {
            if error.code == .serverError || error.code == .invalidClient {
                log.warning(
                    "oauth.refused", ["step": step, "error": error.error, "debug": error.debug ?? ""])
            }
            return error.response()
        }
        log.error("oauth.failed", ["step": step, "reason": OAuthServices.describe(error)])
        return OAuthServices.failure(error).response()
    }
}
