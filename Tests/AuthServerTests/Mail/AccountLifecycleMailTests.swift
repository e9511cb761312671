import Foundation
import LoginPages
import Testing

@testable import AuthServer

/// The goodbye, the new address's code and the old address's notice, in both languages.
@Suite("Mail: the account's life")
struct AccountLifecycleMailTests {
    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: [
        (PageLanguage.en, "Example ID: your account was deleted", "cannot be undone"),
        (.ja, "Example ID: アカウントを削除しました", "取り消せません"),
    ])
    func goodbye(_ language: PageLanguage, subject: String, irreversible: String) {
        let content = MailTemplates.goodbye(at: Self.date, siteName: "Example ID", language: language)
        #expect(content.subject == subject)
        #expect(content.text.contains(irreversible))
        #expect(content.html.contains(#"<html lang="\#(language.rawValue)">"#))
    }

    @Test func theCodeIsInTheBodyNeverInTheSubject() {
        let content = MailTemplates.emailChangeCode(
            code: "123456", link: "https://id.example.com/account/email/confirm?token=abc",
            lifetimeMinutes: 15,
            siteName: "Example ID", language: .en)
        #expect(!content.subject.contains("123456"))
        #expect(content.text.contains("    123456"))
        #expect(content.text.contains("https://id.example.com/account/email/confirm?token=abc"))
    }

    @Test(arguments: [PageLanguage.en, .ja])
    func theOldAddressIsToldWithTheUndoLinkAndTheNewAddressEscaped(_ language: PageLanguage) {
        let content = MailTemplates.emailChanged(
            newEmail: "new<b>@example.com", undoURL: "https://id.example.com/account/email/undo?token=xyz",
            undoDays: 7, at: Self.date, siteName: "Example ID", language: language)
        #expect(content.text.contains("new<b>@example.com"))
        #expect(content.html.contains("new&lt;b&gt;@example.com"))
        #expect(!content.html.contains("new<b>"))
        #expect(content.text.contains("https://id.example.com/account/email/undo?token=xyz"))
        #expect(content.text.contains("7"))
    }
}
