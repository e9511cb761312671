import Foundation

/// What `/verify-email` (the link in the verification message) came to.
public struct EmailVerificationResultPage: Sendable {
    public enum Result: Sendable, Equatable { case verified, invalid, expired, locked }

    public var context: PageContext
    public var result: Result
    /// Whether a session is signed in (then the page links to the account page, else to sign-in).
    public var signedIn: Bool

    public init(context: PageContext, result: Result, signedIn: Bool) {
        self.context = context
        self.result = result
        self.signedIn = signedIn
    }
}

/// The account page's prompt for an address that is not verified yet: a code form (a plain
/// GET form to `/verify-email`, so it works without JavaScript) and a button for a new code.
public struct EmailVerificationPrompt: Sendable {
    /// The live code's id, when there is one (the form sends it along with the code).
    public var codeID: String?
    /// Set after a code was just sent, or refused for being too soon.
    public var notice: Notice?

    public enum Notice: String, Sendable { case sent, tooSoon }

    public init(codeID: String?, notice: Notice? = nil) {
        self.codeID = codeID
        self.notice = notice
    }
}

/// Sentences of the verification pages, English and Japanese.
struct EmailVerificationStrings {
    enum Key: CaseIterable {
        case verifiedTitle, verifiedMessage, invalidTitle, invalidMessage, expiredTitle, expiredMessage
        case toAccount, toSignIn, promptTitle, promptMessage, codeLabel, verifyButton, resendButton
        case sentNotice, tooSoonNotice, invalidCode, codeExpired, lockedTitle, lockedMessage
    }

    let language: PageLanguage

    subscript(_ key: Key) -> String {
        switch language {
        case .en:
            switch key {
            case .verifiedTitle: "Email address verified"
            case .verifiedMessage: "Thank you. Your email address is confirmed."
            case .invalidTitle: "This link does not work"
            case .invalidMessage:
                "The code in this link is not correct or was already used. Open the account page to get a new one."
            case .expiredTitle: "This code has expired"
            case .expiredMessage:
                "The code is too old or was tried too often. Ask for a new one on the account page."
            case .toAccount: "Go to your account"
            case .toSignIn: "Sign in"
            case .promptTitle: "Confirm your email address"
            case .promptMessage:
                "We sent a six-digit code to your address. Enter it here to confirm the address."
            case .codeLabel: "Verification code"
            case .verifyButton: "Confirm"
            case .resendButton: "Send a new code"
            case .sentNotice: "A new code is on its way."
            case .tooSoonNotice: "A code was sent a moment ago. Wait a minute before asking for another."
            case .invalidCode: "This code is not correct. Check the message and try again."
            case .codeExpired: "This code can no longer be used. Send a new code."
            case .lockedTitle: "Too many attempts"
            case .lockedMessage:
                "Too many codes were tried for this address. Wait an hour, then ask for a new code on the account page."
            }
        case .ja:
            switch key {
            case .verifiedTitle: "メールアドレスを確認しました"
            case .verifiedMessage: "ありがとうございます。メールアドレスの確認が完了しました。"
            case .invalidTitle: "このリンクは使用できません"
            case .invalidMessage: "リンクのコードが正しくないか、すでに使用されています。アカウントページで新しいコードを取得してください。"
            case .expiredTitle: "コードの有効期限が切れています"
            case .expiredMessage: "コードの有効期限が切れたか、試行回数の上限に達しました。アカウントページで新しいコードを取得してください。"
            case .toAccount: "アカウントへ"
            case .toSignIn: "サインイン"
            case .promptTitle: "メールアドレスを確認してください"
            case .promptMessage: "6 桁のコードをメールで送信しました。ここに入力してアドレスを確認してください。"
            case .codeLabel: "確認コード"
            case .verifyButton: "確認する"
            case .resendButton: "新しいコードを送信"
            case .sentNotice: "新しいコードを送信しました。"
            case .tooSoonNotice: "少し前にコードを送信しました。1 分ほど待ってから再度お試しください。"
            case .invalidCode: "コードが正しくありません。メールを確認してもう一度入力してください。"
            case .codeExpired: "このコードは使用できなくなりました。新しいコードを送信してください。"
            case .lockedTitle: "試行回数が多すぎます"
            case .lockedMessage: "このアドレスで試されたコードが多すぎます。1 時間ほど待ってから、アカウントページで新しいコードを取得してください。"
            }
        }
    }
}

extension LoginPages {
    public static func emailVerificationResult(_ page: EmailVerificationResultPage) -> String {
        let s = EmailVerificationStrings(language: page.context.language)
        let (title, message): (String, String) =
            switch page.result {
            case .verified: (s[.verifiedTitle], s[.verifiedMessage])
            case .invalid: (s[.invalidTitle], s[.invalidMessage])
            case .expired: (s[.expiredTitle], s[.expiredMessage])
            case .locked: (s[.lockedTitle], s[.lockedMessage])
            }
        // No language links: they would repeat the request, whose code is now used.
        return Layout(
            language: page.context.language, title: title, siteName: page.context.siteName, csrfToken: nil,
            script: nil, languageLinkBase: nil
        ).render([
            H.el("h1", [:], [.text(title)]),
            H.p(
                ["class": page.result == .verified ? "status success" : "status error", "role": "status"],
                [.text(message)]),
            H.el(
                "a",
                [
                    "class": page.result == .verified ? "button primary" : "button secondary",
                    "href": page.signedIn ? "/account" : "/signin",
                ],
                [.text(page.signedIn ? s[.toAccount] : s[.toSignIn])]),
        ])
    }

    /// The section the account page shows while the address is not verified.
    static func emailVerificationSection(_ prompt: EmailVerificationPrompt, context: PageContext) -> HTMLNode
    {
        let s = EmailVerificationStrings(language: context.language)
        let notice: HTMLNode =
            switch prompt.notice {
            case .sent: H.p(["class": "status success", "role": "status"], [.text(s[.sentNotice])])
            case .tooSoon: H.p(["class": "status error", "role": "alert"], [.text(s[.tooSoonNotice])])
            case nil: .fragment([])
            }
        var verifyForm: HTMLNode = .fragment([])
        if let codeID = prompt.codeID {
            verifyForm = H.el(
                "form",
                [
                    "id": "email-verify-form", "method": "get", "action": "/verify-email",
                    "class": "inline-form",
                ],
                [
                    H.hidden("id", codeID),
                    field(
                        id: "verification-code", label: s[.codeLabel], type: "text", name: "code",
                        autocomplete: "one-time-code", extra: "12"),
                    H.el("button", ["type": "submit", "class": "primary"], [.text(s[.verifyButton])]),
                ])
        }
        return H.el(
            "section",
            [
                "aria-labelledby": "email-verification-heading", "id": "email-verification",
                "data-verified": s[.verifiedMessage], "data-invalid-code": s[.invalidCode],
                "data-code-expired": s[.codeExpired], "data-locked": s[.lockedMessage],
                "data-sent": s[.sentNotice],
                "data-too-soon": s[.tooSoonNotice],
            ],
            [
                H.el("h2", ["id": "email-verification-heading"], [.text(s[.promptTitle])]),
                notice,
                H.p(["class": "hint"], [.text(s[.promptMessage])]),
                verifyForm,
                H.el(
                    "form", ["method": "post", "action": "/account/email/resend", "id": "email-resend-form"],
                    [
                        H.hidden("csrf_token", context.csrfToken),
                        H.el("button", ["type": "submit", "class": "secondary"], [.text(s[.resendButton])]),
                    ]),
            ])
    }
}
