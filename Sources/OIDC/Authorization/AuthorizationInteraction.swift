/// Where the browser goes when an authorization request has to wait for the user (sign-in,
/// sign-up, choosing an account), and how it comes back.
///
/// A waiting request keeps its own parameters in the URL, plus `resume`: the id of the row
/// that remembers when the request first arrived, so that `prompt=login` and `max_age` can
/// tell a sign-in made for this request from an older one (`SessionContext.requestReceivedAt`).
public enum AuthorizationInteraction {
    /// The parameter that names the remembered request; never part of the request itself.
    public static let resumeParameter = "resume"
    /// `step_up=passkey` on the sign-in page: the request asks for a passkey (`acr`).
    public static let stepUpParameter = "step_up"

    /// `/authorize?<the request's own parameters>&resume=<id>`: where the sign-in, sign-up and
    /// consent pages send the browser back to.
    public static func resumeURL(items: [(name: String, value: String)], resume: String) -> String {
        "/authorize?" + FormEncoding.encode(items + [(name: resumeParameter, value: resume)])
    }

    /// The page for `SessionDecision.login`: the sign-up page for `prompt=create`, else the
    /// sign-in page; `prompt=login` when someone is signed in (so the page asks again instead
    /// of continuing as them); the request's `login_hint` and `ui_locales` carried along.
    public static func login(
        _ reason: SessionDecision.LoginReason, request: AuthorizationRequest, signedIn: Bool, returnTo: String
    ) -> String {
        var query: [(name: String, value: String)] = [(name: "return_to", value: returnTo)]
        if signedIn { query.append((name: "prompt", value: "login")) }
        if reason == .stepUp { query.append((name: stepUpParameter, value: "passkey")) }
        if let hint = request.loginHint { query.append((name: "login_hint", value: hint)) }
        if !request.uiLocales.isEmpty {
            query.append((name: "ui_locales", value: request.uiLocales.joined(separator: " ")))
        }
        let page = reason == .promptCreate ? "/signup" : "/signin"
        return page + "?" + FormEncoding.encode(query)
    }

    /// Signing in again to choose an account (`prompt=login`, then back to the request). The
    /// application answers `SessionDecision.selectAccount` with its account chooser, whose "Use
    /// another account" link leads to the sign-in page like this.
    public static func selectAccount(returnTo: String) -> String {
        "/signin?"
            + FormEncoding.encode([(name: "return_to", value: returnTo), (name: "prompt", value: "login")])
    }

    /// The consent page's "use another account" link: signing in again, then back here.
    public static func switchAccount(returnTo: String) -> String {
        "/signin?"
            + FormEncoding.encode([(name: "prompt", value: "login"), (name: "return_to", value: returnTo)])
    }
}

extension SessionContext {
    /// Whether the scopes the account consented to for this client (nil: never) cover every
    /// requested scope.
    public static func consentCovers(_ requested: [String], consented: [String]?) -> Bool {
        consented.map { Set(requested).isSubset(of: Set($0)) } ?? false
    }
}
