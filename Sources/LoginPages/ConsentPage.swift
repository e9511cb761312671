/// The consent page `/authorize` shows when a client asks for scopes the user has not granted
/// it yet. The form posts `decision=allow` or `decision=deny`, the CSRF token and the
/// caller's hidden fields (such as an authorization request id) to `action`.
public struct ConsentPage: Sendable {
    public var context: PageContext
    public var clientName: String
    /// Scope values as requested (`openid`, `profile`, `email`, `offline_access`, others are
    /// shown as they are).
    public var scopes: [String]
    public var accountEmail: String
    public var action: String
    public var hiddenFields: [(name: String, value: String)]
    /// Where "Not you?" leads, e.g. `/signin?prompt=login&return_to=…`.
    public var switchAccountLink: String
    /// What the configured APIs' scopes let the client do, by scope name: shown in the page's
    /// language instead of the bare scope name.
    public var apiScopes: [String: APIScopeText] = [:]

    /// An API scope as the user reads it: the API's name and the scope's description.
    public struct APIScopeText: Sendable, Equatable {
        public var apiName: String
        public var english: String
        public var japanese: String

        public init(apiName: String, english: String, japanese: String) {
            self.apiName = apiName
            self.english = english
            self.japanese = japanese
        }
    }

    public init(
        context: PageContext, clientName: String, scopes: [String], accountEmail: String, action: String,
        hiddenFields: [(name: String, value: String)], switchAccountLink: String
    ) {
        self.context = context
        self.clientName = clientName
        self.scopes = scopes
        self.accountEmail = accountEmail
        self.action = action
        self.hiddenFields = hiddenFields
        self.switchAccountLink = switchAccountLink
    }
}

extension LoginPages {
    public static func consent(_ page: ConsentPage) -> String {
        let s = Strings(page.context.language)
        let scopeItems: [HTMLNode] = page.scopes.map { scope in
            let text: String =
                switch scope {
                case "openid": s[.scopeOpenID]
                case "profile": s[.scopeProfile]
                case "email": s[.scopeEmail]
                case "offline_access": s[.scopeOfflineAccess]
                default:
                    page.apiScopes[scope].map {
                        "\($0.apiName): \(page.context.language == .ja ? $0.japanese : $0.english)"
                    } ?? scope
                }
            return H.el("li", [:], [.text(text)])
        }
        let hidden = page.hiddenFields.map { H.hidden($0.name, $0.value) }
        let content: [HTMLNode] = [
            H.el("h1", [:], [.text(s[.consentTitle])]),
            H.p(
                ["class": "subtitle"],
                [H.el("strong", [:], [.text(page.clientName)]), .text(" " + s[.consentIntro])]),
            H.el("ul", ["class": "scopes"], scopeItems),
            H.p(
                ["class": "hint"],
                [
                    .text(s[.signedInAs] + " "), H.el("strong", [:], [.text(page.accountEmail)]),
                    .text(" · "),
                    H.el("a", ["href": page.switchAccountLink], [.text(s[.notYou])]),
                ]),
            H.el(
                "form", ["method": "post", "action": page.action, "class": "consent-actions"],
                [H.hidden("csrf_token", page.context.csrfToken)] + hidden + [
                    H.el(
                        "button",
                        ["type": "submit", "name": "decision", "value": "deny", "class": "secondary"],
                        [.text(s[.deny])]),
                    H.el(
                        "button",
                        ["type": "submit", "name": "decision", "value": "allow", "class": "primary"],
                        [.text(s[.allow])]),
                ]),
        ]
        return Layout(
            language: page.context.language, title: s[.consentTitle], siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: nil, languageLinkBase: page.context.path
        ).render(content)
    }
}
