import Foundation
import LoginPages

/// The server's messages in English and Japanese: plain text, and a simple HTML alternative in
/// which every inserted value is escaped. The language is the page language of the request
/// that caused the message. Subjects never carry a code: the development transport logs them.
enum MailTemplates {
    /// What a security notification reports.
    enum SecurityEvent: Sendable, Equatable {
        case passkeyAdded(name: String)
        case passkeyRemoved(name: String)
        case passwordChanged
        case passwordRemoved
    }

    struct Content: Sendable, Equatable {
        var subject: String
        var text: String
        var html: String

        func mail(to address: String) -> OutgoingMail {
            OutgoingMail(to: address, subject: subject, text: text, html: html)
        }
    }

    // MARK: - Email verification

    static func verification(
        code: String, link: String, lifetimeMinutes: Int, siteName: String, language: PageLanguage
    ) -> Content {
        switch language {
        case .en:
            let intro = "Enter this code on the account page to confirm your email address for \(siteName):"
            let linkLine = "Or open this link:"
            let expiry = "The code works for \(lifetimeMinutes) minutes and only once."
            let ignore =
                "If you did not create an account, ignore this message: nothing happens without the code."
            return render(
                subject: "\(siteName): confirm your email address",
                paragraphs: [
                    .text(intro), .code(code), .text(linkLine), .link(link), .text(expiry), .text(ignore),
                ],
                language: language)
        case .ja:
            let intro = "\(siteName) のメールアドレスを確認するため、アカウントページで次のコードを入力してください。"
            let linkLine = "または、次のリンクを開いてください。"
            let expiry = "このコードの有効期限は \(lifetimeMinutes) 分で、1 回だけ使えます。"
            let ignore = "アカウントを作成した覚えがない場合は、このメールを無視してください。コードがなければ何も起こりません。"
            return render(
                subject: "\(siteName): メールアドレスの確認",
                paragraphs: [
                    .text(intro), .code(code), .text(linkLine), .link(link), .text(expiry), .text(ignore),
                ],
                language: language)
        }
    }

    /// Too many wrong codes were entered for this address: the verification is locked for a while.
    static func verificationLocked(
        lockedMinutes: Int, accountURL: String, siteName: String, language: PageLanguage
    )
        -> Content
    {
        switch language {
        case .en:
            return render(
                subject: "\(siteName): email verification locked",
                paragraphs: [
                    .text(
                        "Too many wrong codes were entered to confirm this email address for \(siteName). Confirmation is locked for about \(lockedMinutes) minutes."
                    ),
                    .text(
                        "If you are confirming your address, wait and ask for a new code on the account page. If you did not sign up, someone may be trying to use your address: you can ignore this message, nothing is confirmed without the code."
                    ),
                    .link(accountURL),
                ],
                language: language)
        case .ja:
            return render(
                subject: "\(siteName): メールアドレスの確認がロックされました",
                paragraphs: [
                    .text("\(siteName) でこのメールアドレスを確認するために誤ったコードが何度も入力されました。確認は約 \(lockedMinutes) 分間ロックされます。"),
                    .text(
                        "ご自身で確認中の場合は、しばらく待ってからアカウントページで新しいコードを取得してください。登録した覚えがない場合は、誰かがあなたのアドレスを使おうとしている可能性があります。このメールは無視してかまいません。コードがなければ何も確認されません。"
                    ),
                    .link(accountURL),
                ],
                language: language)
        }
    }

    /// Someone signed up with an address that already belongs to a verified account.
    static func signUpAttempt(signInURL: String, recoverURL: String, siteName: String, language: PageLanguage)
        -> Content
    {
        switch language {
        case .en:
            return render(
                subject: "\(siteName): someone tried to sign up with your address",
                paragraphs: [
                    .text(
                        "Someone just tried to create a \(siteName) account with this email address. The address stays with your account: the new account cannot confirm it."
                    ),
                    .text("If it was you, sign in instead:"), .link(signInURL),
                    .text("If you cannot sign in, recover your account:"), .link(recoverURL),
                    .text("If it was not you, you can ignore this message."),
                ],
                language: language)
        case .ja:
            return render(
                subject: "\(siteName): あなたのアドレスでアカウント作成が試みられました",
                paragraphs: [
                    .text(
                        "このメールアドレスで \(siteName) のアカウントを作成しようとした人がいます。このアドレスはあなたのアカウントのものであり、新しいアカウントでは確認できません。"
                    ),
                    .text("ご自身の場合は、代わりにサインインしてください:"), .link(signInURL),
                    .text("サインインできない場合は、アカウントを回復してください:"), .link(recoverURL),
                    .text("心当たりがない場合は、このメールを無視してください。"),
                ],
                language: language)
        }
    }

    // MARK: - Security notifications

    static func securityNotice(
        _ event: SecurityEvent, at date: Date, accountURL: String, siteName: String, language: PageLanguage
    ) -> Content {
        let when = timestamp(date, language)
        switch language {
        case .en:
            let (subject, what, advice): (String, String, String) =
                switch event {
                case .passkeyAdded(let name):
                    (
                        "A passkey was added to your account",
                        "A passkey named “\(name)” was added to your \(siteName) account on \(when).",
                        "If this was not you, sign in, remove this passkey and change your password at once."
                    )
                case .passkeyRemoved(let name):
                    (
                        "A passkey was removed from your account",
                        "The passkey named “\(name)” was removed from your \(siteName) account on \(when).",
                        "If this was not you, sign in, check your passkeys and change your password at once."
                    )
                case .passwordChanged:
                    (
                        "Your password was changed",
                        "The password of your \(siteName) account was changed on \(when). Every other browser was signed out and every app must sign in again.",
                        "If this was not you, sign in with a passkey and change your password at once."
                    )
                case .passwordRemoved:
                    (
                        "Your password was removed",
                        "The password of your \(siteName) account was removed on \(when); you now sign in with passkeys only. Every other browser was signed out and every app must sign in again.",
                        "If this was not you, sign in, remove any passkey you do not know and set a new password."
                    )
                }
            return render(
                subject: "\(siteName): \(subject)",
                paragraphs: [
                    .text(what), .text(advice), .text("Review your account:"), .link(accountURL),
                    .text("This message was sent because of a change to your account's security."),
                ],
                language: language)
        case .ja:
            let (subject, what, advice): (String, String, String) =
                switch event {
                case .passkeyAdded(let name):
                    (
                        "アカウントにパスキーが追加されました",
                        "\(when)、\(siteName) アカウントにパスキー「\(name)」が追加されました。",
                        "心当たりがない場合は、すぐにサインインしてこのパスキーを削除し、パスワードを変更してください。"
                    )
                case .passkeyRemoved(let name):
                    (
                        "アカウントからパスキーが削除されました",
                        "\(when)、\(siteName) アカウントからパスキー「\(name)」が削除されました。",
                        "心当たりがない場合は、すぐにサインインしてパスキーを確認し、パスワードを変更してください。"
                    )
                case .passwordChanged:
                    (
                        "パスワードが変更されました",
                        "\(when)、\(siteName) アカウントのパスワードが変更されました。ほかのすべてのブラウザーからサインアウトされ、すべてのアプリで再度のサインインが必要になりました。",
                        "心当たりがない場合は、すぐにパスキーでサインインしてパスワードを変更してください。"
                    )
                case .passwordRemoved:
                    (
                        "パスワードが削除されました",
                        "\(when)、\(siteName) アカウントのパスワードが削除されました。今後はパスキーだけでサインインします。ほかのすべてのブラウザーからサインアウトされ、すべてのアプリで再度のサインインが必要になりました。",
                        "心当たりがない場合は、すぐにサインインして覚えのないパスキーを削除し、新しいパスワードを設定してください。"
                    )
                }
            return render(
                subject: "\(siteName): \(subject)",
                paragraphs: [
                    .text(what), .text(advice), .text("アカウントを確認する:"), .link(accountURL),
                    .text("このメールは、アカウントのセキュリティに関わる変更があったため送信されました。"),
                ],
                language: language)
        }
    }

    // MARK: - Rendering

    enum Paragraph: Equatable {
        case text(String)
        /// A one-time code, shown large in HTML.
        case code(String)
        case link(String)
    }

    static func render(subject: String, paragraphs: [Paragraph], language: PageLanguage) -> Content {
        let text =
            paragraphs.map { paragraph in
                switch paragraph {
                case .text(let value): value
                case .code(let value): "    \(value)"
                case .link(let value): value
                }
            }.joined(separator: "\n\n") + "\n"
        let body = paragraphs.map { paragraph in
            switch paragraph {
            case .text(let value):
                "<p>\(escape(value))</p>"
            case .code(let value):
                "<p style=\"font-size:28px;font-weight:bold;letter-spacing:4px;font-family:monospace\">\(escape(value))</p>"
            case .link(let value):
                "<p><a href=\"\(escape(value))\">\(escape(value))</a></p>"
            }
        }.joined(separator: "\n")
        let html = """
            <!DOCTYPE html>
            <html lang="\(language.rawValue)">
            <head><meta charset="utf-8"><title>\(escape(subject))</title></head>
            <body style="font-family:sans-serif;line-height:1.5;color:#1d1d1f">
            \(body)
            </body>
            </html>

            """
        return Content(subject: subject, text: text, html: html)
    }

    static func escape(_ text: String) -> String { HTMLNode.escapeAttribute(text) }

    /// A time both readers understand without a time-zone setting: UTC, spelled out.
    static func timestamp(_ date: Date, _ language: PageLanguage) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String {
            let v = value ?? 0
            return v < 10 ? "0\(v)" : "\(v)"
        }
        let y = p.year ?? 1970
        switch language {
        case .en: return "\(y)-\(two(p.month))-\(two(p.day)) at \(two(p.hour)):\(two(p.minute)) UTC"
        case .ja: return "\(y)年\(p.month ?? 1)月\(p.day ?? 1)日 \(two(p.hour)):\(two(p.minute)) (UTC)"
        }
    }
}
