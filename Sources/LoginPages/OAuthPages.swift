import Foundation

/// OAuth 2.0 Form Post Response Mode: a form that carries the response to the client. A
/// small script submits it; without script the user presses Continue.
public struct FormPostPage: Sendable {
    public var context: PageContext
    public var action: String
    public var fields: [(name: String, value: String)]

    public init(context: PageContext, action: String, fields: [(name: String, value: String)]) {
        self.context = context
        self.action = action
        self.fields = fields
    }
}

/// RP-initiated logout: the question asked when the request cannot prove it comes from the
/// signed-in user's own client.
public struct LogoutConfirmationPage: Sendable {
    public var context: PageContext
    public var clientName: String?
    public var fields: [(name: String, value: String)]

    public init(context: PageContext, clientName: String?, fields: [(name: String, value: String)]) {
        self.context = context
        self.clientName = clientName
        self.fields = fields
    }
}

/// The applications an account has approved, each revocable.
public struct ConnectedAppsPage: Sendable {
    public struct App: Sendable {
        public var clientID: String
        public var name: String
        public var scopes: [String]
        public var grantedAt: Date
        public init(clientID: String, name: String, scopes: [String], grantedAt: Date) {
            self.clientID = clientID
            self.name = name
            self.scopes = scopes
            self.grantedAt = grantedAt
        }
    }

    public var context: PageContext
    public var apps: [App]
    public var notice: String?

    public init(context: PageContext, apps: [App], notice: String? = nil) {
        self.context = context
        self.apps = apps
        self.notice = notice
    }
}

/// The sentences of the OAuth pages, in English and Japanese.
struct OAuthStrings {
    let language: PageLanguage

    func scope(_ scope: String) -> String {
        switch (scope, language) {
        case ("openid", .en): "Sign you in with your account"
        case ("openid", .ja): "あなたのアカウントでサインインする"
        case ("profile", .en): "See your name"
        case ("profile", .ja): "あなたの名前を見る"
        case ("email", .en): "See your email address"
        case ("email", .ja): "あなたのメールアドレスを見る"
        case ("offline_access", .en): "Stay connected when you are not using it"
        case ("offline_access", .ja): "使用していないときも接続を維持する"
        default: scope
        }
    }

    subscript(_ key: String) -> String {
        let en: [String: String] = [
            "formPostTitle": "Continue", "formPostLead": "Returning you to the application…",
            "continue": "Continue",
            "logoutTitle": "Sign out?", "logoutLead": "Do you want to sign out of this site?",
            "logoutFrom": "The request came from", "signOut": "Sign out", "stay": "Stay signed in",
            "signedOutTitle": "Signed out", "signedOutLead": "You have signed out.",
            "stayedTitle": "Still signed in", "stayedLead": "You are still signed in.",
            "appsTitle": "Connected apps", "appsLead": "Applications you allowed to use your account.",
            "noApps": "No applications have access.", "revoke": "Remove access", "granted": "Allowed",
            "backToAccount": "Back to your account", "signIn": "Sign in",
        ]
        let ja: [String: String] = [
            "formPostTitle": "続行", "formPostLead": "アプリケーションに戻っています…",
            "continue": "続行",
            "logoutTitle": "サインアウトしますか？", "logoutLead": "このサイトからサインアウトしますか？",
            "logoutFrom": "リクエスト元", "signOut": "サインアウト", "stay": "サインインしたままにする",
            "signedOutTitle": "サインアウトしました", "signedOutLead": "サインアウトしました。",
            "stayedTitle": "サインイン中", "stayedLead": "サインインしたままです。",
            "appsTitle": "連携中のアプリ", "appsLead": "あなたのアカウントの利用を許可したアプリケーション。",
            "noApps": "アクセスを許可したアプリケーションはありません。", "revoke": "アクセスを取り消す", "granted": "許可日時",
            "backToAccount": "アカウントに戻る", "signIn": "サインイン",
        ]
        return (language == .ja ? ja[key] : en[key]) ?? en[key] ?? key
    }
}

extension LoginPages {
    static func hiddenFields(_ fields: [(name: String, value: String)]) -> [HTMLNode] {
        fields.map { H.el("input", ["type": "hidden", "name": $0.name, "value": $0.value]) }
    }

    public static func formPost(_ page: FormPostPage) -> String {
        let s = OAuthStrings(language: page.context.language)
        let content: [HTMLNode] = [
            H.el("h1", [:], [.text(s["formPostTitle"])]),
            H.p(["class": "subtitle"], [.text(s["formPostLead"])]),
            H.el(
                "form", ["method": "post", "action": page.action, "id": "form-post"],
                hiddenFields(page.fields) + [
                    H.el(
                        "button", ["type": "submit", "class": "primary", "id": "form-post-continue"],
                        [.text(s["continue"])])
                ]),
        ]
        return Layout(
            language: page.context.language, title: s["formPostTitle"], siteName: page.context.siteName,
            csrfToken: nil, script: "form_post.js", bodyAttributes: [("data-page", "form-post")],
            languageLinkBase: nil
        ).render(content)
    }

    public static func logoutConfirmation(_ page: LogoutConfirmationPage) -> String {
        let s = OAuthStrings(language: page.context.language)
        var content: [HTMLNode] = [
            H.el("h1", [:], [.text(s["logoutTitle"])]),
            H.p(["class": "subtitle"], [.text(s["logoutLead"])]),
        ]
        if let name = page.clientName {
            content.append(
                H.p(
                    ["class": "hint"],
                    [.text(s["logoutFrom"] + " "), H.el("strong", ["id": "client-name"], [.text(name)])]))
        }
        content.append(
            H.el(
                "form", ["method": "post", "action": "/logout/confirm", "id": "logout-form"],
                [H.hidden("csrf_token", page.context.csrfToken)] + hiddenFields(page.fields) + [
                    H.el(
                        "button",
                        [
                            "type": "submit", "name": "confirm", "value": "yes", "class": "primary",
                            "id": "logout-confirm",
                        ], [.text(s["signOut"])]),
                    H.el(
                        "button",
                        [
                            "type": "submit", "name": "confirm", "value": "no", "class": "ghost",
                            "id": "logout-cancel",
                        ], [.text(s["stay"])]),
                ]))
        return Layout(
            language: page.context.language, title: s["logoutTitle"], siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: nil, bodyAttributes: [("data-page", "logout")],
            languageLinkBase: nil
        ).render(content)
    }

    /// After sign-out (or a declined one) when there is no client to return to.
    public static func signedOut(_ context: PageContext, stillSignedIn: Bool = false) -> String {
        let s = OAuthStrings(language: context.language)
        let title = stillSignedIn ? s["stayedTitle"] : s["signedOutTitle"]
        return Layout(
            language: context.language, title: title, siteName: context.siteName, csrfToken: nil, script: nil,
            bodyAttributes: [("data-page", stillSignedIn ? "logout-cancelled" : "signed-out")],
            languageLinkBase: nil
        ).render([
            H.el("h1", [:], [.text(title)]),
            H.p(
                ["class": "subtitle", "role": "status"],
                [.text(stillSignedIn ? s["stayedLead"] : s["signedOutLead"])]),
            H.el(
                "a", ["class": "button secondary", "href": stillSignedIn ? "/account" : "/signin"],
                [.text(stillSignedIn ? s["backToAccount"] : s["signIn"])]),
        ])
    }

    public static func connectedApps(_ page: ConnectedAppsPage) -> String {
        let s = OAuthStrings(language: page.context.language)
        let items: [HTMLNode] = page.apps.map { app in
            H.el(
                "li", ["class": "item", "data-client-id": app.clientID],
                [
                    H.div(
                        ["class": "item-main"],
                        [
                            H.div(["class": "item-title"], [H.el("strong", [:], [.text(app.name)])]),
                            H.p(["class": "meta"], [.text(app.scopes.map(s.scope).joined(separator: " · "))]),
                            H.p(
                                ["class": "meta"],
                                [
                                    .text(s["granted"] + " "),
                                    DateText.node(app.grantedAt, page.context.language),
                                ]),
                        ]),
                    H.div(
                        ["class": "item-actions"],
                        [
                            H.el(
                                "form", ["method": "post", "action": "/account/apps/revoke"],
                                [
                                    H.hidden("csrf_token", page.context.csrfToken),
                                    H.hidden("client_id", app.clientID),
                                    H.el(
                                        "button",
                                        [
                                            "type": "submit", "class": "small danger",
                                            "aria-label": "\(s["revoke"]): \(app.name)",
                                        ], [.text(s["revoke"])]),
                                ])
                        ]),
                ])
        }
        return Layout(
            language: page.context.language, title: s["appsTitle"], siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: nil,
            bodyAttributes: [("data-page", "apps"), ("class", "wide")],
            languageLinkBase: page.context.path
        ).render([
            H.el("h1", [:], [.text(s["appsTitle"])]),
            H.p(["class": "subtitle"], [.text(s["appsLead"])]),
            status(page.notice),
            page.apps.isEmpty
                ? H.p(["class": "empty", "id": "no-apps"], [.text(s["noApps"])])
                : H.el("ul", ["class": "list", "id": "app-list"], items),
            H.el("a", ["class": "button secondary", "href": "/account"], [.text(s["backToAccount"])]),
        ])
    }
}
