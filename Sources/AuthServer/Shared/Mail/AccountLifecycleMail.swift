import Foundation
import LoginPages

/// The messages of an account's life: the goodbye after a deletion, the code that confirms a
/// new address, and the notice to the old address with its undo link.
extension MailTemplates {
    /// Sent to the verified address after the account was deleted, so that a deletion the
    /// holder did not make is noticed (nothing can be restored, but they can act elsewhere).
    static func goodbye(at date: Date, siteName: String, language: PageLanguage) -> Content {
        let when = timestamp(date, language)
        switch language {
        case .en:
            return render(
                subject: "\(siteName): your account was deleted",
                paragraphs: [
                    .text("Your \(siteName) account was deleted on \(when), as requested."),
                    .text(
                        "Your profile, email addresses, passkeys, password, sessions, linked sign-in providers and app connections were removed. Apps you used with this account were signed out."
                    ),
                    .text("This cannot be undone. Thank you for having used \(siteName)."),
                    .text(
                        "If you did not delete your account, someone else could sign in to it: change the password of your email account."
                    ),
                ],
                language: language)
        case .ja:
            return render(
                subject: "\(siteName): アカウントを削除しました",
                paragraphs: [
                    .text("\(when)、ご依頼により \(siteName) のアカウントを削除しました。"),
                    .text(
                        "プロフィール、メールアドレス、パスキー、パスワード、セッション、連携したサインイン方法、アプリとの接続を削除しました。このアカウントで使っていたアプリからはサインアウトされました。"
                    ),
                    .text("削除は取り消せません。\(siteName) をご利用いただきありがとうございました。"),
                    .text("削除した覚えがない場合は、第三者がサインインできた可能性があります。メールアカウントのパスワードを変更してください。"),
                ],
                language: language)
        }
    }

    /// To the new address: the code (and link) that confirms it before it replaces the old one.
    static func emailChangeCode(
        code: String, link: String, lifetimeMinutes: Int, siteName: String, language: PageLanguage
    ) -> Content {
        switch language {
        case .en:
            return render(
                subject: "\(siteName): confirm your new email address",
                paragraphs: [
                    .text(
                        "Enter this code on the account page to make this address the email address of your \(siteName) account:"
                    ),
                    .code(code), .text("Or open this link:"), .link(link),
                    .text("The code works for \(lifetimeMinutes) minutes and only once."),
                    .text(
                        "If you did not ask for this, ignore this message: nothing changes without the code."),
                ],
                language: language)
        case .ja:
            return render(
                subject: "\(siteName): 新しいメールアドレスの確認",
                paragraphs: [
                    .text("このアドレスを \(siteName) アカウントのメールアドレスにするには、アカウントページで次のコードを入力してください。"),
                    .code(code), .text("または、次のリンクを開いてください。"), .link(link),
                    .text("このコードの有効期限は \(lifetimeMinutes) 分で、1 回だけ使えます。"),
                    .text("心当たりがない場合は、このメールを無視してください。コードがなければ何も変わりません。"),
                ],
                language: language)
        }
    }

    /// To the old address once the change is done: what changed and the undo link.
    static func emailChanged(
        newEmail: String, undoURL: String, undoDays: Int, at date: Date, siteName: String,
        language: PageLanguage
    ) -> Content {
        let when = timestamp(date, language)
        switch language {
        case .en:
            return render(
                subject: "\(siteName): your email address was changed",
                paragraphs: [
                    .text(
                        "The email address of your \(siteName) account was changed to \(newEmail) on \(when). This address no longer signs in."
                    ),
                    .text(
                        "If this was not you, open this link within \(undoDays) days: it restores this address and signs out every browser and app."
                    ),
                    .link(undoURL),
                ],
                language: language)
        case .ja:
            return render(
                subject: "\(siteName): メールアドレスが変更されました",
                paragraphs: [
                    .text("\(when)、\(siteName) アカウントのメールアドレスが \(newEmail) に変更されました。このアドレスではサインインできなくなりました。"),
                    .text("心当たりがない場合は、\(undoDays) 日以内に次のリンクを開いてください。このアドレスに戻し、すべてのブラウザーとアプリからサインアウトします。"),
                    .link(undoURL),
                ],
                language: language)
        }
    }
}
