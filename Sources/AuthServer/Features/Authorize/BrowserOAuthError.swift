import HTTPServer
import LoginPages
import OIDC

/// A refusal of the browser-facing OAuth endpoints (`/authorize`, `/logout`). It goes to the
/// client when the client and its redirect URI are trusted, and is otherwise shown on an error
/// page, never redirected.
enum BrowserOAuthError: Error, Equatable {
    /// The error response, to the validated redirect URI.
    case toClient(AuthorizationResponse, uiLocales: [String])
    /// An error page (unknown client, unregistered redirect URI, bad form, failure).
    case page(OAuthError)

    /// Any error of a browser endpoint as its refusal: a malformed query or form is
    /// `invalid_request`; an unexpected error is logged as `failureEvent` and shown as
    /// `server_error` (or `temporarily_unavailable` while the database is).
    init(_ error: any Error, failureEvent: String, log: Log) {
        switch error {
        case let error as BrowserOAuthError:
            self = error
        case let error as HTTPError:
            self = .page(OAuthError(.invalidRequest, hint: "The request is malformed.", debug: error.message))
        case let error as OAuthError:
            self = .page(error)
        default:
            log.error(failureEvent, ["reason": OAuthServices.describe(error)])
            self = .page(OAuthServices.failure(error))
        }
    }

    /// The fields a page of this server posted back (consent, logout confirmation), once its
    /// CSRF token checks out; otherwise `expired`, shown on an error page.
    static func verifiedForm(_ request: HTTPRequest, csrf: CSRFProtection, expired: OAuthError)
        throws(BrowserOAuthError) -> [(name: String, value: String)]
    {
        let items = (try? request.formItems()) ?? []
        do {
            try csrf.verify(request, submitted: items.first { $0.name == CSRFProtection.formField }?.value)
        } catch {
            throw .page(expired)
        }
        return items
    }

    func response(to request: HTTPRequest, _ oauth: OAuthServices) -> HTTPResponse {
        switch self {
        case .toClient(let response, let uiLocales):
            return oauth.authorizationResponse(response, to: request, uiLocales: uiLocales)
        case .page(let error):
            return oauth.errorPage(request, error)
        }
    }
}

extension OAuthServices {
    static func noStore(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// A redirect, or for `form_post` a page that posts the fields to the client. That page
    /// submits a form to the client's origin, which the default policy forbids.
    func authorizationResponse(
        _ response: AuthorizationResponse, to request: HTTPRequest, uiLocales: [String]
    )
        -> HTTPResponse
    {
        switch response {
        case .redirect(let location):
            return Self.noStore(.redirect(to: location))
        case .formPost(let action, let fields):
            let (context, _) = pageContext(request, uiLocales: uiLocales)
            var page = Self.page(
                LoginPages.formPost(FormPostPage(context: context, action: action, fields: fields)))
            page.headers.set("Content-Security-Policy", AuthorizationResponse.formPostPolicy(action: action))
            return page
        }
    }
}
