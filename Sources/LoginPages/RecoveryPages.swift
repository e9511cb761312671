import Foundation

/// `/recover`: ask for a code by email, enter it, then register a new passkey or set a new
/// password; afterwards, offer to sign out every other session. Each step is a section the
/// page script reveals in turn.
public struct RecoverPage: Sendable {
    public var context: PageContext
    public var email: String
    public var uiLocales: String?

    public init(context: PageContext, email: String = "", uiLocales: String? = nil) {
        self.context = context
        self.email = email
        self.uiLocales = uiLocales
    }
}

/// `/passkey-prompt`: the explicit "Create a passkey" step of the sign-in flow, shown after
/// a number of password sign-ins, with "Not now" continuing to where the user was going.
public struct PasskeyPromptPage: Sendable {
    public var context: PageContext
    public var returnTo: String

    public init(context: PageContext, returnTo: String) {
        self.context = context
        self.returnTo = returnTo
    }
}

/// `/dev/mail`: the development mailbox, newest first.
public struct DevMailboxPage: Sendable {
    public struct Message: Sendable {
        public var to: String
        public var subject: String
        public var text: String
        public init(to: String, subject: String, text: String) {
            self.to = to
            self.subject = subject
            self.text = text
        }
    }

    public var context: PageContext
    public var messages: [Message]

    public init(context: PageContext, messages: [Message]) {
        self.context = context
        self.messages = messages
    }
}

/// The sentences of the recovery and passwordless pages, in English and Japanese. A missing
/// translation is a compile error.
public struct RecoveryStrings: Sendable {
    public enum Key: String, Sendable, CaseIterable {
        case cantSignIn, recoverTitle, recoverLead, sendCode, codeSentLead, code, verifyCode, sendNewCode
        case chooseLead, createNewPasskey, orSetPassword, setNewPassword, recoveredLead, endOtherSessions
        case otherSessionsEnded, continueLabel, invalidCode, codeExpired, recoveryRequired, backToSignIn
        case promptTitle, promptLead, createPasskey, notNow, passkeyRequired, passwordSignUpDisabled
        case mailboxTitle, mailboxEmpty
    }

    public let language: PageLanguage
    public init(_ language: PageLanguage) { self.language = language }

    public subscript(_ key: Key) -> String {
        switch language {
        case .en: Self.english(key)
        case .ja: Self.japanese(key)
        }
    }

    static func english(_ key: Key) -> String {
        switch key {
        case .cantSignIn: "Can't sign in?"
        case .recoverTitle: "Recover your account"
        case .recoverLead: "Enter your account's email address. If it is verified, we send you a code."
        case .sendCode: "Send code"
        case .codeSentLead: "If the address belongs to an account, a code is on its way. Enter it here."
        case .code: "Code"
        case .verifyCode: "Continue"
        case .sendNewCode: "Send a new code"
        case .chooseLead: "Code accepted. Create a new passkey, or set a new password."
        case .createNewPasskey: "Create a new passkey"
        case .orSetPassword: "or set a new password"
        case .setNewPassword: "Set new password"
        case .recoveredLead: "Your account is recovered and you are signed in."
        case .endOtherSessions: "Sign out all other sessions"
        case .otherSessionsEnded: "All other sessions are signed out."
        case .continueLabel: "Continue"
        case .invalidCode: "This code is not valid. Check it, or ask for a new one."
        case .codeExpired: "This code has expired. Ask for a new one."
        case .recoveryRequired: "This recovery has expired or was already used. Start again."
        case .backToSignIn: "Back to sign in"
        case .promptTitle: "Create a passkey"
        case .promptLead:
            "Sign in faster next time: a passkey uses your fingerprint, face or screen lock instead of a password."
        case .createPasskey: "Create a passkey"
        case .notNow: "Not now"
        case .passkeyRequired: "This account has a passkey. Sign in with your passkey."
        case .passwordSignUpDisabled: "New accounts are created with a passkey."
        case .mailboxTitle: "Development mailbox"
        case .mailboxEmpty: "No messages yet."
        }
    }

    static func japanese(_ key: Key) -> String {
        switch key {
        case .cantSignIn: "サインインできませんか？"
        case .recoverTitle: "アカウントの復旧"
        case .recoverLead: "アカウントのメールアドレスを入力してください。確認済みのアドレスにコードを送ります。"
        case .sendCode: "コードを送信"
        case .codeSentLead: "アカウントのアドレスであれば、コードを送信しました。ここに入力してください。"
        case .code: "コード"
        case .verifyCode: "続ける"
        case .sendNewCode: "新しいコードを送信"
        case .chooseLead: "コードを確認しました。新しいパスキーを作成するか、新しいパスワードを設定してください。"
        case .createNewPasskey: "新しいパスキーを作成"
        case .orSetPassword: "または新しいパスワードを設定"
        case .setNewPassword: "新しいパスワードを設定"
        case .recoveredLead: "アカウントを復旧し、サインインしました。"
        case .endOtherSessions: "他のすべてのセッションからサインアウト"
        case .otherSessionsEnded: "他のすべてのセッションからサインアウトしました。"
        case .continueLabel: "続ける"
        case .invalidCode: "このコードは無効です。確認するか、新しいコードを請求してください。"
        case .codeExpired: "このコードは期限切れです。新しいコードを請求してください。"
        case .recoveryRequired: "この復旧は期限切れか、すでに使われています。最初からやり直してください。"
        case .backToSignIn: "サインインに戻る"
        case .promptTitle: "パスキーを作成"
        case .promptLead: "次回はもっと速くサインイン: パスキーならパスワードの代わりに指紋、顔、画面ロックを使います。"
        case .createPasskey: "パスキーを作成"
        case .notNow: "今はしない"
        case .passkeyRequired: "このアカウントにはパスキーがあります。パスキーでサインインしてください。"
        case .passwordSignUpDisabled: "新しいアカウントはパスキーで作成します。"
        case .mailboxTitle: "開発用メールボックス"
        case .mailboxEmpty: "メッセージはまだありません。"
        }
    }
}

extension LoginPages {
    public static func recover(_ page: RecoverPage) -> String {
        let s = Strings(page.context.language)
        let r = RecoveryStrings(page.context.language)
        let content: [HTMLNode] = [
            H.el("h1", [:], [.text(r[.recoverTitle])]),
            status(nil),
            H.el(
                "section", ["id": "step-email"],
                [
                    H.p(["class": "subtitle"], [.text(r[.recoverLead])]),
                    H.el(
                        "form", ["id": "recover-start-form", "class": "stack"],
                        [
                            field(
                                id: "email", label: s[.email], type: "email", name: "email",
                                autocomplete: "username", value: page.email),
                            H.el("button", ["type": "submit", "class": "primary"], [.text(r[.sendCode])]),
                        ]),
                ]),
            H.el(
                "section", ["id": "step-code", "hidden": HTMLNode.on],
                [
                    H.p(["class": "subtitle"], [.text(r[.codeSentLead])]),
                    H.el(
                        "form", ["id": "recover-verify-form", "class": "stack"],
                        [
                            H.div(
                                ["class": "field"],
                                [
                                    H.el("label", ["for": "code"], [.text(r[.code])]),
                                    H.el(
                                        "input",
                                        [
                                            "id": "code", "name": "code", "type": "text",
                                            "inputmode": "numeric", "autocomplete": "one-time-code",
                                            "pattern": "[0-9 -]*", "maxlength": "12", "required": HTMLNode.on,
                                        ]),
                                ]),
                            H.el("button", ["type": "submit", "class": "primary"], [.text(r[.verifyCode])]),
                        ]),
                    H.el(
                        "button", ["type": "button", "id": "recover-resend", "class": "ghost"],
                        [.text(r[.sendNewCode])]),
                ]),
            H.el(
                "section", ["id": "step-choose", "hidden": HTMLNode.on],
                [
                    H.p(["class": "subtitle"], [.text(r[.chooseLead])]),
                    H.el(
                        "button",
                        [
                            "type": "button", "id": "recover-passkey", "class": "primary passkey",
                            "data-requires-passkeys": "", "hidden": HTMLNode.on,
                        ],
                        [
                            H.el("span", ["class": "passkey-icon", "aria-hidden": "true"], []),
                            .text(r[.createNewPasskey]),
                        ]),
                    H.div(
                        ["class": "divider", "data-requires-passkeys": "", "hidden": HTMLNode.on],
                        [H.el("span", [:], [.text(r[.orSetPassword])])]),
                    H.el(
                        "form", ["id": "recover-password-form", "class": "stack"],
                        [
                            H.el(
                                "input",
                                [
                                    "type": "text", "name": "username", "id": "recover-username",
                                    "autocomplete": "username", "value": page.email, "hidden": HTMLNode.on,
                                ]),
                            field(
                                id: "new_password", label: s[.newPassword], type: "password",
                                name: "new_password", autocomplete: "new-password", hint: s[.passwordHint]),
                            H.el(
                                "button", ["type": "submit", "class": "secondary"],
                                [.text(r[.setNewPassword])]),
                        ]),
                ]),
            H.el(
                "section", ["id": "step-done", "hidden": HTMLNode.on],
                [
                    H.p(["class": "subtitle"], [.text(r[.recoveredLead])]),
                    H.el(
                        "button", ["type": "button", "id": "end-other-sessions", "class": "secondary"],
                        [.text(r[.endOtherSessions])]),
                    H.el(
                        "a", ["class": "button primary", "href": "/account", "id": "recover-continue"],
                        [.text(r[.continueLabel])]),
                ]),
            H.p(
                ["class": "switch"],
                [
                    H.el(
                        "a", ["href": withQuery("/signin", [("ui_locales", page.uiLocales)])],
                        [.text(r[.backToSignIn])])
                ]),
            recoveryMessages(s, r),
        ]
        return Layout(
            language: page.context.language, title: r[.recoverTitle], siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: "recover.js",
            bodyAttributes: [("data-page", "recover")],
            languageLinkBase: page.context.path
        ).render(content)
    }

    public static func passkeyPrompt(_ page: PasskeyPromptPage) -> String {
        let s = Strings(page.context.language)
        let r = RecoveryStrings(page.context.language)
        let content: [HTMLNode] = [
            H.el("h1", [:], [.text(r[.promptTitle])]),
            H.p(["class": "subtitle"], [.text(r[.promptLead])]),
            status(nil),
            H.el(
                "button", ["type": "button", "id": "prompt-create", "class": "primary passkey"],
                [
                    H.el("span", ["class": "passkey-icon", "aria-hidden": "true"], []),
                    .text(r[.createPasskey]),
                ]),
            H.el(
                "a", ["class": "button ghost", "href": page.returnTo, "id": "prompt-skip"],
                [.text(r[.notNow])]),
            recoveryMessages(s, r),
        ]
        return Layout(
            language: page.context.language, title: r[.promptTitle], siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: "passkey_prompt.js",
            bodyAttributes: [("data-page", "passkey-prompt"), ("data-return-to", page.returnTo)],
            languageLinkBase: page.context.path
        ).render(content)
    }

    public static func devMailbox(_ page: DevMailboxPage) -> String {
        let r = RecoveryStrings(page.context.language)
        let articles: [HTMLNode] = page.messages.map { message in
            H.el(
                "article", ["class": "mail", "data-to": message.to],
                [
                    H.el("h2", ["class": "subject"], [.text(message.subject)]),
                    H.el("pre", ["class": "text"], [.text(message.text)]),
                ])
        }
        return Layout(
            language: page.context.language, title: r[.mailboxTitle], siteName: page.context.siteName,
            csrfToken: nil, script: nil, bodyAttributes: [("data-page", "dev-mail"), ("class", "wide")],
            languageLinkBase: nil
        ).render(
            [H.el("h1", [:], [.text(r[.mailboxTitle])])]
                + (articles.isEmpty ? [H.p(["class": "empty"], [.text(r[.mailboxEmpty])])] : articles))
    }

    /// The texts the recovery and prompt scripts show, in the page's language.
    static func recoveryMessages(_ s: Strings, _ r: RecoveryStrings) -> HTMLNode {
        H.div(
            [
                "id": "messages", "hidden": HTMLNode.on,
                "data-passkey-failed": s[.passkeyFailed], "data-passkey-cancelled": s[.passkeyCancelled],
                "data-working": s[.working], "data-busy": s[.busy], "data-csrf-failed": s[.csrfFailed],
                "data-too-many-attempts": s[.tooManyAttempts], "data-invalid-email": s[.invalidEmail],
                "data-weak-password": s[.weakPassword], "data-invalid-code": r[.invalidCode],
                "data-code-expired": r[.codeExpired], "data-recovery-required": r[.recoveryRequired],
                "data-other-sessions-ended": r[.otherSessionsEnded], "data-passkey-added": s[.passkeyAdded],
                "data-request-failed": s[.requestFailed],
            ])
    }
}
