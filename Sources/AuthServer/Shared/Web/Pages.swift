import Foundation
import HTTPServer
import LoginPages

/// What every server-rendered page and plain form post shares: reading the form, `no-store`,
/// and rendering with a CSRF token.
enum Pages {
    /// The form's fields, the first value of each name.
    static func form(_ request: HTTPRequest) -> [String: String] {
        var values: [String: String] = [:]
        for item in (try? request.formItems()) ?? [] where values[item.name] == nil {
            values[item.name] = item.value
        }
        return values
    }

    static func noStore(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// Renders a page with a CSRF token (setting the cookie when the browser has none).
    static func page(
        _ services: AccountServices, _ request: HTTPRequest, uiLocales: String? = nil,
        status: HTTPStatus = .ok,
        _ render: (PageContext) -> String
    ) -> HTTPResponse {
        let (token, cookie) = services.csrf.token(for: request)
        var context = services.pageContext(request, csrfToken: token)
        if let uiLocales {
            context.language = PageLanguage.negotiate(
                uiLocales: uiLocales, acceptLanguage: request.headers["Accept-Language"])
        }
        var response = HTTPResponse.html(render(context), status: status)
        if let cookie { response.setCookie(cookie) }
        return noStore(response)
    }
}
