import Foundation

/// The texts of an account's life on the account page: changing the address, downloading the
/// account's data, and deleting the account.
public enum LifecycleText: Sendable {
    case emailChangeHeading, emailChangeLead, newEmail, sendCode, pendingChange, confirmCode, code,
        confirm, cancelChange, emailChangeSent, emailChanged
    case dataHeading, dataLead, downloadData
    case deleteHeading, deleteLead, deleteLink, deleteTitle, deleteWarning, deleteWhat, deleteApps,
        deleteIrreversible, deleteConfirmLabel, deleteButton, deleteConfirmMismatch, deletedTitle,
        deletedLead,
        backToSignIn
    case undoTitle, undoLead, undoButton, undoneTitle, undoneLead, undoInvalid

    public func text(_ language: PageLanguage) -> String {
        switch (self, language) {
        case (.emailChangeHeading, .en): "Email address"
        case (.emailChangeHeading, .ja): "メールアドレス"
        case (.emailChangeLead, .en):
            "Your new address gets a code. It replaces the current one only once you confirm it; the current address is told, with a way to undo."
        case (.emailChangeLead, .ja):
            "新しいアドレスに確認コードを送ります。確認するまで現在のアドレスは変わりません。現在のアドレスにも通知し、取り消す方法をお知らせします。"
        case (.newEmail, .en): "New email address"
        case (.newEmail, .ja): "新しいメールアドレス"
        case (.sendCode, .en): "Send a code"
        case (.sendCode, .ja): "コードを送信"
        case (.pendingChange, .en): "Waiting for confirmation:"
        case (.pendingChange, .ja): "確認待ち："
        case (.confirmCode, .en): "Enter the code sent to the new address."
        case (.confirmCode, .ja): "新しいアドレスに届いたコードを入力してください。"
        case (.code, .en): "Code"
        case (.code, .ja): "コード"
        case (.confirm, .en): "Confirm"
        case (.confirm, .ja): "確認"
        case (.cancelChange, .en): "Cancel the change"
        case (.cancelChange, .ja): "変更をやめる"
        case (.emailChangeSent, .en): "A code was sent to the new address."
        case (.emailChangeSent, .ja): "新しいアドレスにコードを送信しました。"
        case (.emailChanged, .en): "Your email address was changed."
        case (.emailChanged, .ja): "メールアドレスを変更しました。"
        case (.dataHeading, .en): "Your data"
        case (.dataHeading, .ja): "あなたのデータ"
        case (.dataLead, .en):
            "Download your profile, addresses, passkeys (names and dates only), linked sign-in providers, connected apps, sessions and recent security events as one JSON file."
        case (.dataLead, .ja):
            "プロフィール、メールアドレス、パスキー（名前と日時のみ）、連携したサインイン方法、接続中のアプリ、セッション、最近のセキュリティイベントを 1 つの JSON ファイルでダウンロードできます。"
        case (.downloadData, .en): "Download your data"
        case (.downloadData, .ja): "データをダウンロード"
        case (.deleteHeading, .en): "Delete account"
        case (.deleteHeading, .ja): "アカウントの削除"
        case (.deleteLead, .en): "Delete this account and everything that belongs to it."
        case (.deleteLead, .ja): "このアカウントと、それに属するすべてを削除します。"
        case (.deleteLink, .en): "Delete account…"
        case (.deleteLink, .ja): "アカウントを削除…"
        case (.deleteTitle, .en): "Delete your account"
        case (.deleteTitle, .ja): "アカウントを削除"
        case (.deleteWarning, .en): "This deletes your account for good."
        case (.deleteWarning, .ja): "アカウントを完全に削除します。"
        case (.deleteWhat, .en):
            "Your profile, email addresses, passkeys, password, sessions, linked sign-in providers and app connections are deleted."
        case (.deleteWhat, .ja):
            "プロフィール、メールアドレス、パスキー、パスワード、セッション、連携したサインイン方法、アプリとの接続が削除されます。"
        case (.deleteApps, .en):
            "Every app you signed in to with this account is signed out. Passkeys stay in your password manager until you remove them there."
        case (.deleteApps, .ja):
            "このアカウントでサインインしたすべてのアプリからサインアウトされます。パスキーはパスワードマネージャーから削除するまで残ります。"
        case (.deleteIrreversible, .en): "This cannot be undone."
        case (.deleteIrreversible, .ja): "この操作は取り消せません。"
        case (.deleteConfirmLabel, .en): "Type your email address to confirm"
        case (.deleteConfirmLabel, .ja): "確認のためメールアドレスを入力してください"
        case (.deleteButton, .en): "Delete my account"
        case (.deleteButton, .ja): "アカウントを削除する"
        case (.deleteConfirmMismatch, .en): "Type the email address of this account exactly."
        case (.deleteConfirmMismatch, .ja): "このアカウントのメールアドレスを正確に入力してください。"
        case (.deletedTitle, .en): "Your account was deleted"
        case (.deletedTitle, .ja): "アカウントを削除しました"
        case (.deletedLead, .en): "Everything that belonged to it is gone. Thank you for having used it."
        case (.deletedLead, .ja): "アカウントに属するものはすべて削除しました。ご利用ありがとうございました。"
        case (.backToSignIn, .en): "Back to sign-in"
        case (.backToSignIn, .ja): "サインインに戻る"
        case (.undoTitle, .en): "Undo the email change"
        case (.undoTitle, .ja): "メールアドレスの変更を取り消す"
        case (.undoLead, .en):
            "This restores your previous email address and signs out every browser and app. Then sign in and check your passkeys and password."
        case (.undoLead, .ja):
            "以前のメールアドレスに戻し、すべてのブラウザーとアプリからサインアウトします。その後サインインして、パスキーとパスワードを確認してください。"
        case (.undoButton, .en): "Restore my previous address"
        case (.undoButton, .ja): "以前のアドレスに戻す"
        case (.undoneTitle, .en): "Your previous address is back"
        case (.undoneTitle, .ja): "以前のアドレスに戻しました"
        case (.undoneLead, .en):
            "Every browser and app was signed out. Sign in, then check your passkeys and change your password."
        case (.undoneLead, .ja):
            "すべてのブラウザーとアプリからサインアウトしました。サインインして、パスキーを確認しパスワードを変更してください。"
        case (.undoInvalid, .en): "This link has expired or was already used."
        case (.undoInvalid, .ja): "このリンクは期限切れか、すでに使用されています。"
        }
    }
}

/// `/account/delete`: what deletion removes, that it cannot be undone, and the confirmation.
public struct AccountDeletionPage: Sendable {
    public var context: PageContext
    public var email: String
    public var hasPassword: Bool
    public var hasPasskeys: Bool

    public init(context: PageContext, email: String, hasPassword: Bool, hasPasskeys: Bool) {
        self.context = context
        self.email = email
        self.hasPassword = hasPassword
        self.hasPasskeys = hasPasskeys
    }
}

/// The account page's email change: the change waiting for its code, when there is one.
public struct EmailChangePrompt: Sendable {
    public var newEmail: String?

    public init(newEmail: String?) {
        self.newEmail = newEmail
    }
}

extension LoginPages {
    /// The account page's sections for the address, the data export and the deletion.
    static func lifecycleSections(_ page: AccountPage, _ language: PageLanguage) -> HTMLNode {
        func t(_ key: LifecycleText) -> String { key.text(language) }
        var emailChildren: [HTMLNode] = [
            H.el("h2", ["id": "email-change-heading"], [.text(t(.emailChangeHeading))]),
            H.p(["class": "hint"], [.text(t(.emailChangeLead))]),
        ]
        if let pending = page.emailChange?.newEmail {
            emailChildren += [
                H.p(
                    ["id": "pending-email-change"],
                    [.text(t(.pendingChange) + " "), H.el("strong", [:], [.text(pending)])]),
                H.el(
                    "form", ["id": "email-change-confirm-form", "class": "stack"],
                    [
                        H.p(["class": "hint"], [.text(t(.confirmCode))]),
                        field(
                            id: "email_change_code", label: t(.code), type: "text", name: "code",
                            autocomplete: "one-time-code"),
                        H.el("button", ["type": "submit", "class": "primary"], [.text(t(.confirm))]),
                    ]),
                H.el(
                    "button", ["type": "button", "id": "email-change-cancel", "class": "ghost"],
                    [.text(t(.cancelChange))]),
            ]
        }
        emailChildren.append(
            H.el(
                "form",
                [
                    "id": "email-change-form", "class": "stack", "data-sent": t(.emailChangeSent),
                    "data-changed": t(.emailChanged),
                ],
                [
                    field(
                        id: "new_email", label: t(.newEmail), type: "email", name: "email",
                        autocomplete: "email"),
                    H.el("button", ["type": "submit", "class": "secondary"], [.text(t(.sendCode))]),
                ]))
        return .fragment([
            H.el("section", ["aria-labelledby": "email-change-heading"], emailChildren),
            H.el(
                "section", ["aria-labelledby": "data-heading"],
                [
                    H.el("h2", ["id": "data-heading"], [.text(t(.dataHeading))]),
                    H.p(["class": "hint"], [.text(t(.dataLead))]),
                    H.el(
                        "a",
                        [
                            "class": "button secondary", "href": "/api/account/export", "id": "download-data",
                            "download": "account-data.json",
                        ],
                        [.text(t(.downloadData))]),
                ]),
            H.el(
                "section", ["aria-labelledby": "delete-heading"],
                [
                    H.el("h2", ["id": "delete-heading"], [.text(t(.deleteHeading))]),
                    H.p(["class": "hint"], [.text(t(.deleteLead))]),
                    H.el(
                        "a", ["class": "button danger", "href": "/account/delete", "id": "delete-account"],
                        [.text(t(.deleteLink))]),
                ]),
        ])
    }

    /// `/account/delete`. The page script sends the deletion (`DELETE /api/account`) and asks
    /// for a recent sign-in first when the server wants one.
    public static func accountDeletion(_ page: AccountDeletionPage) -> String {
        let language = page.context.language
        let s = Strings(language)
        func t(_ key: LifecycleText) -> String { key.text(language) }
        // The re-authentication prompt of the account page, for this account's credentials.
        var reauth = AccountPage(
            context: page.context, displayName: "", email: page.email, rpID: "", userID: "",
            hasPassword: page.hasPassword, canRemovePassword: false, passkeys: [], sessions: [])
        if page.hasPasskeys {
            reauth.passkeys = [
                AccountPage.Passkey(
                    id: "", credentialID: "", name: "", provider: nil, synced: false, createdAt: Date(),
                    lastUsedAt: nil)
            ]
        }
        let content: [HTMLNode] = [
            H.el("h1", [:], [.text(t(.deleteTitle))]),
            status(nil),
            reauthenticationSection(reauth, s),
            H.el(
                "section", ["class": "warning", "aria-labelledby": "delete-warning"],
                [
                    H.el("h2", ["id": "delete-warning"], [.text(t(.deleteWarning))]),
                    H.p([:], [.text(t(.deleteWhat))]),
                    H.p([:], [.text(t(.deleteApps))]),
                    H.p([:], [H.el("strong", [:], [.text(t(.deleteIrreversible))])]),
                ]),
            H.el(
                "form",
                [
                    "id": "delete-account-form", "class": "stack", "data-mismatch": t(.deleteConfirmMismatch),
                    "data-email": page.email,
                ],
                [
                    field(
                        id: "confirm_email", label: t(.deleteConfirmLabel), type: "email", name: "email",
                        autocomplete: "off"),
                    H.el(
                        "button", ["type": "submit", "class": "danger", "id": "delete-confirm"],
                        [
                            .text(t(.deleteButton))
                        ]),
                ]),
            H.el("a", ["class": "button ghost", "href": "/account"], [.text(s[.cancel])]),
            messages(s),
        ]
        return Layout(
            language: language, title: t(.deleteTitle), siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: "account.js",
            bodyAttributes: [("data-page", "account-delete")],
            languageLinkBase: page.context.path
        ).render(content)
    }

    /// A page with a title, a lead and one link: the goodbye after a deletion, the outcome of
    /// an email change's undo.
    public static func lifecycleNotice(
        _ context: PageContext, title: LifecycleText, lead: LifecycleText, link: (LifecycleText, String)
    ) -> String {
        let language = context.language
        return Layout(
            language: language, title: title.text(language), siteName: context.siteName, csrfToken: nil,
            script: nil, languageLinkBase: context.path
        ).render([
            H.el("h1", [:], [.text(title.text(language))]),
            H.p(["class": "subtitle", "id": "lifecycle-lead"], [.text(lead.text(language))]),
            H.el("a", ["class": "button secondary", "href": link.1], [.text(link.0.text(language))]),
        ])
    }

    /// `/account/email/undo`: a button, so that a mail scanner opening the link changes nothing.
    public static func emailChangeUndo(_ context: PageContext, token: String) -> String {
        let language = context.language
        func t(_ key: LifecycleText) -> String { key.text(language) }
        return Layout(
            language: language, title: t(.undoTitle), siteName: context.siteName,
            csrfToken: context.csrfToken,
            script: nil, languageLinkBase: nil
        ).render([
            H.el("h1", [:], [.text(t(.undoTitle))]),
            H.p(["class": "subtitle"], [.text(t(.undoLead))]),
            H.el(
                "form", ["method": "post", "action": "/account/email/undo", "class": "stack"],
                [
                    H.hidden("csrf_token", context.csrfToken),
                    H.hidden("token", token),
                    H.el(
                        "button", ["type": "submit", "class": "primary", "id": "undo-email-change"],
                        [
                            .text(t(.undoButton))
                        ]),
                ]),
        ])
    }
}
