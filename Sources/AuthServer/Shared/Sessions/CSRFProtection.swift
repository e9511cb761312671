import Crypto
import HTTPServer

/// Double-submit CSRF protection: a random token in an HttpOnly cookie, repeated by the page
/// in a form field (`csrf_token`) or a header (`X-CSRF-Token`); both must match. Pages learn
/// the token from the HTML they are served, so the cookie never needs to be readable by script.
///
/// A request that carries `Origin` must also come from the issuer's origin (`null` is
/// tolerated: under `Referrer-Policy: no-referrer` browsers send it on same-origin form
/// posts), and one marked `Sec-Fetch-Site: cross-site` or `same-site` is refused outright.
struct CSRFProtection: Sendable {
    static let headerName = "X-CSRF-Token"
    static let formField = "csrf_token"

    let cookies: SessionCookies
    let allowedOrigin: String
    /// Draws new tokens.
    var system = TimeAndRandomness.live

    /// The token to embed in a page, and the cookie to set when the browser has none yet.
    func token(for request: HTTPRequest) -> (token: String, cookie: Cookie?) {
        if let existing = request.cookies[cookies.csrfName], Self.isWellFormed(existing) {
            return (existing, nil)
        }
        let token = Base64URL.encode(system.randomBytes(32))
        return (token, cookies.csrf(token))
    }

    /// Throws `csrf_failed` unless the submitted token equals the cookie's and the origin fits.
    func verify(_ request: HTTPRequest, submitted: String?) throws(APIError) {
        if let origin = request.headers["Origin"], origin != allowedOrigin, origin != "null" {
            throw APIError.csrf
        }
        if let site = request.headers["Sec-Fetch-Site"]?.lowercased(),
            site == "cross-site" || site == "same-site"
        {
            throw APIError.csrf
        }
        guard let cookie = request.cookies[cookies.csrfName], Self.isWellFormed(cookie),
            let submitted = submitted ?? request.headers[Self.headerName],
            constantTimeEquals(Array(cookie.utf8), Array(submitted.utf8))
        else { throw APIError.csrf }
    }

    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43
            && token.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D
                    || $0 == 0x5F
            }
    }
}
