/// The account chooser: the accounts signed in in this browser, each a button that continues
/// as that account (posting `session_id`, the CSRF token and `hiddenFields` to `action`), a
/// "Use another account" link to the sign-in page, and sign-out of one account or all.
///
/// `/authorize` shows it for `prompt=select_account` and when the request names another
/// signed-in account; `/accounts` shows it to switch the account the account page shows.
public struct AccountChooserPage: Sendable {
    public struct Account: Sendable, Equatable {
        /// The session's public id (never its token).
        public var sessionID: String
        public var displayName: String
        public var email: String
        public var isCurrent: Bool

        public init(sessionID: String, displayName: String, email: String, isCurrent: Bool) {
            self.sessionID = sessionID
            self.displayName = displayName
            self.email = email
            self.isCurrent = isCurrent
        }
    }

    public var context: PageContext
    public var accounts: [Account]
    /// The client the user continues to, when the chooser serves an authorization request.
    public var clientName: String?
    /// The session id of the account the request names (`login_hint`): listed first and focused.
    public var suggestedSessionID: String?
    public var action: String
    public var hiddenFields: [(name: String, value: String)]
    /// The sign-in page, coming back to where the chooser was shown.
    public var useAnotherAccountLink: String
    /// Where the sign-out form returns to.
    public var signOutReturnTo: String

    public init(
        context: PageContext, accounts: [Account], clientName: String?, suggestedSessionID: String? = nil,
        action: String, hiddenFields: [(name: String, value: String)], useAnotherAccountLink: String,
        signOutReturnTo: String
    ) {
        self.context = context
        self.accounts = accounts
        self.clientName = clientName
        self.suggestedSessionID = suggestedSessionID
        self.action = action
        self.hiddenFields = hiddenFields
        self.useAnotherAccountLink = useAnotherAccountLink
        self.signOutReturnTo = signOutReturnTo
    }
}

/// The chooser's sentences in both languages (kept beside the page that uses them).
public enum ChooserText: Sendable {
    case title, continueTo, signedInHere, current, suggested, useAnother, signOutHeading, signOutOf,
        signOutAll, switchAccount, accountsLabel

    public func text(_ language: PageLanguage) -> String {
        switch (self, language) {
        case (.title, .en): "Choose an account"
        case (.title, .ja): "アカウントを選択"
        case (.continueTo, .en): "to continue to"
        case (.continueTo, .ja): "に進むアカウント"
        case (.signedInHere, .en): "Accounts signed in on this browser"
        case (.signedInHere, .ja): "このブラウザでログイン中のアカウント"
        case (.current, .en): "Current"
        case (.current, .ja): "使用中"
        case (.suggested, .en): "Requested"
        case (.suggested, .ja): "指定されたアカウント"
        case (.useAnother, .en): "Use another account"
        case (.useAnother, .ja): "別のアカウントを使う"
        case (.signOutHeading, .en): "Sign out"
        case (.signOutHeading, .ja): "ログアウト"
        case (.signOutOf, .en): "Sign out of"
        case (.signOutOf, .ja): "ログアウト："
        case (.signOutAll, .en): "Sign out of all accounts"
        case (.signOutAll, .ja): "すべてのアカウントからログアウト"
        case (.switchAccount, .en): "Switch account"
        case (.switchAccount, .ja): "アカウントを切り替える"
        case (.accountsLabel, .en): "Signed-in accounts"
        case (.accountsLabel, .ja): "ログイン中のアカウント"
        }
    }
}

extension LoginPages {
    public static func accountChooser(_ page: AccountChooserPage) -> String {
        let language = page.context.language
        func t(_ key: ChooserText) -> String { key.text(language) }
        let ordered =
            page.accounts.filter { $0.sessionID == page.suggestedSessionID }
            + page.accounts.filter { $0.sessionID != page.suggestedSessionID }
        let choices: [HTMLNode] = ordered.map { account in
            let isSuggested = account.sessionID == page.suggestedSessionID
            let attributes: KeyValuePairs<String, String?> = [
                "type": "submit", "name": "session_id", "value": account.sessionID,
                "class": "secondary account-choice", "autofocus": isSuggested ? "autofocus" : nil,
                "aria-current": account.isCurrent ? "true" : nil,
            ]
            var badges: [HTMLNode] = []
            if account.sessionID == page.suggestedSessionID {
                badges.append(H.el("span", ["class": "badge"], [.text(t(.suggested))]))
            }
            if account.isCurrent {
                badges.append(H.el("span", ["class": "badge synced"], [.text(t(.current))]))
            }
            return H.el(
                "li", [:],
                [
                    H.el(
                        "button", attributes,
                        [
                            H.el(
                                "span", ["class": "item-title"],
                                [H.el("strong", [:], [.text(account.displayName)])] + badges),
                            H.el("span", ["class": "meta"], [.text(account.email)]),
                        ])
                ])
        }
        let signOuts: [HTMLNode] = page.accounts.map { account in
            H.el(
                "li", [:],
                [
                    H.el(
                        "button",
                        [
                            "type": "submit", "name": "session_id", "value": account.sessionID,
                            "class": "ghost account-signout",
                        ],
                        [.text(t(.signOutOf) + (language == .ja ? "" : " ") + account.email)])
                ])
        }
        let subtitle: HTMLNode =
            page.clientName.map { name in
                H.p(
                    ["class": "subtitle"],
                    language == .ja
                        ? [H.el("strong", [:], [.text(name)]), .text(t(.continueTo))]
                        : [.text(t(.continueTo) + " "), H.el("strong", [:], [.text(name)])])
            } ?? H.p(["class": "subtitle"], [.text(t(.signedInHere))])
        let content: [HTMLNode] = [
            H.el("h1", ["id": "chooser-heading"], [.text(t(.title))]),
            subtitle,
            H.el(
                "form", ["method": "post", "action": page.action, "id": "chooser-form"],
                [H.hidden("csrf_token", page.context.csrfToken)]
                    + page.hiddenFields.map { H.hidden($0.name, $0.value) }
                    + [
                        H.el(
                            "ul", ["class": "list accounts", "aria-label": t(.accountsLabel)], choices)
                    ]),
            H.p(
                ["class": "switch"],
                [
                    H.el(
                        "a", ["href": page.useAnotherAccountLink, "id": "use-another-account"],
                        [.text(t(.useAnother))])
                ]
            ),
            H.el(
                "section", ["aria-labelledby": "signout-heading"],
                [
                    H.el("h2", ["id": "signout-heading"], [.text(t(.signOutHeading))]),
                    H.el(
                        "form",
                        ["method": "post", "action": "/accounts/signout", "id": "chooser-signout-form"],
                        [
                            H.hidden("csrf_token", page.context.csrfToken),
                            H.hidden("return_to", page.signOutReturnTo),
                            H.el("ul", ["class": "list"], signOuts),
                            H.el(
                                "button",
                                [
                                    "type": "submit", "name": "all", "value": "1", "class": "danger",
                                    "id": "signout-all",
                                ],
                                [.text(t(.signOutAll))]),
                        ]),
                ]),
        ]
        return Layout(
            language: language, title: t(.title), siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: nil, languageLinkBase: page.context.path
        ).render(content)
    }
}
