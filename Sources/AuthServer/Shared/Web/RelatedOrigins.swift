import Crypto
import Foundation
import HTTPServer

/// The passkey sign-in endpoints as seen from a WebAuthn related origin (WebAuthn Level 3
/// §5.11, `webauthn.related_origins`): a page on one of those origins runs the ceremony with
/// this RP ID and calls `…/authentication/start` and `…/finish` across sites.
///
/// Such a call carries no cookie this server can rely on (the CSRF cookie is SameSite=Lax),
/// so the double-submit check cannot apply. Instead the page first obtains a token bound to
/// its origin (`GET /api/related-origins/csrf`, readable only by that origin through CORS) and
/// repeats it in `X-CSRF-Token`; the request's `Origin` must be the one the token was issued
/// to. Any other origin gets no CORS headers and the usual refusal.
struct RelatedOriginCSRF {
    /// How long an issued token stays usable: long enough for a sign-in started on a page opened a while ago, short enough
    /// that the table stays small (expired rows are removed when new tokens are issued).
    static let lifetimeSeconds = 600
    /// The paths a related origin may call (and that answer its CORS preflight).
    static let paths: Set<String> = [
        "/api/related-origins/csrf",
        "/api/passkeys/authentication/start",
        "/api/passkeys/authentication/finish",
    ]

    let origins: Set<String>
    let store: any RelatedOriginTokenStore
    let system: TimeAndRandomness

    init(services: AccountServices) {
        origins = Set(services.configuration.webAuthn.relatedOrigins)
        store = PostgresRelatedOriginTokenStore(db: services.pool)
        system = services.system
    }

    /// The request's `Origin` when it is one of the configured related origins.
    func relatedOrigin(of request: HTTPRequest) -> String? {
        guard let origin = request.headers["Origin"], origins.contains(origin) else { return nil }
        return origin
    }

    /// A new token for `origin`; only its digest is stored.
    func issue(for origin: String) throws -> String {
        let token = Base64URL.encode(system.randomBytes(32))
        try store.insert(
            digest: Self.digest(token), origin: origin, lifetimeSeconds: Self.lifetimeSeconds)
        return token
    }

    /// Whether the request's `X-CSRF-Token` is an unexpired token issued to `origin`.
    func isValid(_ request: HTTPRequest, origin: String) throws -> Bool {
        guard let submitted = request.headers[CSRFProtection.headerName],
            CSRFProtection.isWellFormed(submitted)
        else { return false }
        return try store.isValid(digest: Self.digest(submitted), origin: origin)
    }

    static func digest(_ token: String) -> [UInt8] { SHA256.hash(data: Array(token.utf8)).bytes }
}

/// CORS (Fetch standard §3.2) for the related origins, on `RelatedOriginCSRF.paths` only: the
/// preflight and the response name the calling origin (never `*`, since credentials are
/// allowed); any other origin gets no CORS header, so its page cannot read the answer and its
/// JSON POST is never sent. `Vary: Origin` keeps caches from mixing the answers.
struct RelatedOriginCORS: HTTPMiddleware {
    let origins: Set<String>

    func handle(
        _ request: HTTPRequest, context: inout RequestContext,
        next: (HTTPRequest, inout RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        guard RelatedOriginCSRF.paths.contains(request.path) else { return try next(request, &context) }
        let origin = request.headers["Origin"].flatMap { origins.contains($0) ? $0 : nil }
        var response: HTTPResponse
        if request.method == .options, request.headers["Access-Control-Request-Method"] != nil {
            // The preflight: answered here, before any route (the routes take no OPTIONS).
            response = HTTPResponse(status: .noContent)
            if origin != nil {
                response.headers.set("Access-Control-Allow-Methods", "GET, POST")
                response.headers.set("Access-Control-Allow-Headers", "Content-Type, X-CSRF-Token")
                response.headers.set("Access-Control-Max-Age", "600")
            }
        } else {
            do {
                response = try next(request, &context)
            } catch let error as any HTTPResponseError {
                // Errors answer with the CORS headers too, so the page can read the error code
                // (`unknown_credential` for the Signal API, `csrf_failed`).
                response = error.response()
            }
        }
        response.headers.set("Vary", "Origin")
        if let origin {
            response.headers.set("Access-Control-Allow-Origin", origin)
            response.headers.set("Access-Control-Allow-Credentials", "true")
        }
        return response
    }
}
