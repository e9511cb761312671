import Foundation
import LoginPages

/// The two messages of a recovery, in English and Japanese: the code, and the notice that
/// the account was recovered (which also reaches the owner when someone else did it). The
/// code is in the body only: subjects reach the development transport's log line.
enum RecoveryMail {
    static func code(
        to address: String, code: String, link: String, minutes: Int, siteName: String, language: PageLanguage
    ) -> OutgoingMail {
        let subject: String
        let lines: [String]
        switch language {
        case .en:
            subject = "Your \(siteName) recovery code"
            lines = [
                "Someone asked to recover the \(siteName) account of this address.",
                "",
                "Your code: \(code)",
                "",
                "Enter it on the recovery page, or open this link: \(link)",
                "The code works once, for \(minutes) minutes.",
                "",
                "If you did not ask for this, ignore this message: nothing changes without the code.",
            ]
        case .ja:
            subject = "\(siteName) のアカウント復旧コード"
            lines = [
                "このメールアドレスの \(siteName) アカウントの復旧が申請されました。",
                "",
                "コード: \(code)",
                "",
                "復旧ページでコードを入力するか、次のリンクを開いてください: \(link)",
                "コードは \(minutes) 分間、一度だけ使えます。",
                "",
                "心当たりがない場合は、このメールを無視してください。コードがなければ何も変わりません。",
            ]
        }
        return mail(to: address, subject: subject, lines: lines)
    }

    /// `{issuer}/recover?email=…#code=…`: the code rides in the fragment, which the browser
    /// keeps to itself, and the page fills both fields.
    static func link(issuer: String, email: String, code: String) -> String {
        var link = URLComponents(string: issuer + "/recover")
        link?.queryItems = [URLQueryItem(name: "email", value: email)]
        link?.fragment = "code=\(code)"
        return link?.string ?? issuer + "/recover"
    }

    enum Method: String, Sendable { case passkey, password }

    static func recovered(to address: String, method: Method, siteName: String, language: PageLanguage)
        -> OutgoingMail
    {
        let subject: String
        let lines: [String]
        switch (language, method) {
        case (.en, _):
            subject = "Your \(siteName) account was recovered"
            lines = [
                "Your \(siteName) account was recovered with a code sent to this address.",
                method == .passkey ? "A new passkey was added." : "A new password was set.",
                "Every browser was signed out and every app must sign in again.",
                "",
                "If this was not you, sign in, remove what you do not recognise on your account page and sign out everywhere else.",
            ]
        case (.ja, _):
            subject = "\(siteName) のアカウントが復旧されました"
            lines = [
                "このメールアドレスに送られたコードで \(siteName) のアカウントが復旧されました。",
                method == .passkey ? "新しいパスキーが追加されました。" : "新しいパスワードが設定されました。",
                "すべてのブラウザーからサインアウトされ、すべてのアプリで再度のサインインが必要になりました。",
                "",
                "心当たりがない場合は、サインインしてアカウントページで身に覚えのないものを削除し、他のすべての場所からサインアウトしてください。",
            ]
        }
        return mail(to: address, subject: subject, lines: lines)
    }

    /// Plain text, and the same paragraphs as escaped HTML.
    static func mail(to address: String, subject: String, lines: [String]) -> OutgoingMail {
        let text = lines.joined(separator: "\n") + "\n"
        let paragraphs = lines.filter { !$0.isEmpty }.map { "<p>\(MailTemplates.escape($0))</p>" }.joined(separator: "\n")
        let html = "<!doctype html>\n<html><body>\n\(paragraphs)\n</body></html>\n"
        return OutgoingMail(to: address, subject: subject, text: text, html: html)
    }
}
