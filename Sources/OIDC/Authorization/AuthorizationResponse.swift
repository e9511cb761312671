/// How the authorization response reaches the client (OAuth 2.0 Multiple Response Types
/// §2.1, Form Post Response Mode). `fragment` is not offered: it only served the implicit
/// flow.
public enum ResponseMode: String, Sendable, Equatable, CaseIterable {
    case query
    case formPost = "form_post"
}

/// Where an authorization response (success or error) goes, once the client and its
/// redirect URI are known to be valid.
public struct AuthorizationRedirect: Sendable, Equatable {
    public var redirectURI: String
    public var responseMode: ResponseMode
    /// Returned verbatim, exactly as received.
    public var state: String?
    /// `iss` (RFC 9207), so a client talking to several servers can detect mix-up attacks.
    public var issuer: String

    public init(redirectURI: String, responseMode: ResponseMode, state: String?, issuer: String) {
        self.redirectURI = redirectURI
        self.responseMode = responseMode
        self.state = state
        self.issuer = issuer
    }

    /// The success response: `code`, `state`, `iss` (RFC 6749 §4.1.2, RFC 9207 §2).
    public func success(code: String) -> AuthorizationResponse {
        respond([("code", code)])
    }

    /// The error response: `error`, `error_description`, `state`, `iss` (RFC 6749 §4.1.2.1).
    /// Only for errors with `redirectable == true`; the others belong on an error page.
    public func failure(_ error: OAuthError) -> AuthorizationResponse {
        respond([("error", error.error), ("error_description", error.errorDescription)])
    }

    private func respond(_ leading: [(name: String, value: String)]) -> AuthorizationResponse {
        var fields = leading
        if let state { fields.append(("state", state)) }
        fields.append(("iss", issuer))
        switch responseMode {
        case .query:
            return .redirect(location: Self.appendingQuery(fields, to: redirectURI))
        case .formPost:
            return .formPost(action: redirectURI, fields: fields)
        }
    }

    /// Adds the parameters to the URI's query, keeping any query the client registered
    /// (RFC 6749 §3.1.2: "MUST retain the query component").
    static func appendingQuery(_ fields: [(name: String, value: String)], to uri: String) -> String {
        let query = FormEncoding.encode(fields)
        guard let questionMark = uri.firstIndex(of: "?") else { return uri + "?" + query }
        let existing = uri[uri.index(after: questionMark)...]
        if existing.isEmpty || existing.hasSuffix("&") { return uri + query }
        return uri + "&" + query
    }
}

/// What the endpoint sends: a redirect (`303 See Other` or `302 Found`, `Location`), or an
/// HTML page that auto-submits `fields` by POST to `action` (form_post; the page must
/// escape both and be served with `Cache-Control: no-store`).
public enum AuthorizationResponse: Sendable, Equatable {
    case redirect(location: String)
    case formPost(action: String, fields: [(name: String, value: String)])

    public static func == (lhs: AuthorizationResponse, rhs: AuthorizationResponse) -> Bool {
        switch (lhs, rhs) {
        case (.redirect(let a), .redirect(let b)): return a == b
        case (.formPost(let a, let f), .formPost(let b, let g)):
            return a == b && f.map(\.name) == g.map(\.name) && f.map(\.value) == g.map(\.value)
        default: return false
        }
    }
}

/// A refused authorization request: the error, and where to send it. `redirect == nil`
/// means the client or redirect URI could not be trusted: show an error page, never
/// redirect.
public struct AuthorizationFailure: Error, Sendable, Equatable {
    public var error: OAuthError
    public var redirect: AuthorizationRedirect?

    public init(error: OAuthError, redirect: AuthorizationRedirect?) {
        var error = error
        if redirect == nil { error.redirectable = false }
        self.error = error
        self.redirect = redirect
    }

    /// The response to send when redirectable, else nil (render an error page with
    /// `error.error` and `error.errorDescription`, status `error.status`).
    public var response: AuthorizationResponse? {
        guard let redirect, error.redirectable else { return nil }
        return redirect.failure(error)
    }
}
