import Foundation
import HTTPServer
import OIDC

/// Registration helpers for the JSON API: every state-changing call passes the CSRF check
/// first, every error is an `APIError`, every response is `no-store`.
struct JSONAPI {
    let router: Router
    let services: AccountServices

    typealias Handler = @Sendable (HTTPRequest, RequestContext) throws(APIError) -> HTTPResponse

    /// `relatedOrigins`: the endpoint may also be called from a WebAuthn related origin, whose
    /// requests pass the origin-bound token check of `RelatedOriginCSRF` instead of the
    /// double-submit cookie (see docs/security.md).
    func add(
        _ method: HTTPMethod, _ path: String, relatedOrigins: Bool = false, _ handler: @escaping Handler
    ) {
        let services = services
        let stateChanging = method != .get && method != .head
        router.add(method, path) { request, context in
            if stateChanging {
                let related = relatedOrigins ? RelatedOriginCSRF(services: services) : nil
                if let related, let origin = related.relatedOrigin(of: request) {
                    guard
                        try services.guarded(
                            "csrf.relatedOrigin", { try related.isValid(request, origin: origin) })
                    else { throw APIError.csrf }
                } else {
                    try services.csrf.verify(request, submitted: nil)
                }
            }
            var response = try handler(request, context)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
    }

    typealias StepHandler = @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse

    /// Registers a handler whose every failure answers as an `APIError`: its own `APIError`s
    /// as they are, an unavailable database as 503, anything else as a 500 logged under `step`
    /// (see `AccountServices.guarded`). The routes then hold no error wrapper of their own.
    func add(_ method: HTTPMethod, _ path: String, step: String, _ handler: @escaping StepHandler) {
        let services = services
        add(method, path) { request, context throws(APIError) in
            try services.guarded(step) { try handler(request, context) }
        }
    }

    static func json<T: Encodable>(_ value: T, status: HTTPStatus = .ok) throws(APIError) -> HTTPResponse {
        do {
            return try HTTPResponse.json(value, status: status)
        } catch {
            throw APIError(
                status: .internalServerError, code: "server_error", message: "Something went wrong.")
        }
    }

    /// A JSON object written by `JSONBody`: the same bytes `json(_:)` writes for an
    /// `Encodable` with these members, without `JSONEncoder`'s cost (tens of microseconds per
    /// body, on requests such as a passkey sign-in that are a millisecond in all).
    static func json(_ object: [String: JSONValue], status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "application/json"], body: JSONBody.encode(object))
    }

    static func decode<T: Decodable>(_ type: T.Type, _ request: HTTPRequest) throws(APIError) -> T {
        do {
            return try request.decodeJSON(type)
        } catch {
            if error.status == .unsupportedMediaType {
                throw APIError(
                    status: .unsupportedMediaType, code: "unsupported_media_type",
                    message: "Send application/json.")
            }
            throw APIError.badRequest("The JSON body is malformed or misses a required member.")
        }
    }

    static func uuid(_ text: String?) throws(APIError) -> UUID {
        guard let text, let id = UUID(uuidString: text) else { throw APIError.badRequest("Unknown id.") }
        return id
    }
}
