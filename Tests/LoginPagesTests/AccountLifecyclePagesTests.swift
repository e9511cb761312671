import Foundation
import Testing

@testable import LoginPages

@Suite("Account page: email change, data download, deletion")
struct AccountLifecyclePagesTests {
    static func context(_ language: PageLanguage, path: String = "/account") -> PageContext {
        PageContext(language: language, siteName: "Example ID", csrfToken: "TOKEN", path: path)
    }

    static func account(_ language: PageLanguage, pending: String? = nil) -> String {
        var page = AccountPage(
            context: context(language), displayName: "A", email: "a@example.com", rpID: "example.com",
            userID: "dQ", hasPassword: true, canRemovePassword: false, passkeys: [], sessions: [])
        page.emailChange = EmailChangePrompt(newEmail: pending)
        return LoginPages.account(page)
    }

    @Test func theAccountPageLinksToTheDownloadAndTheDeletion() {
        let html = Self.account(.en)
        #expect(html.contains(#"href="/api/account/export""#))
        #expect(html.contains(#"download="account-data.json""#))
        #expect(html.contains(#"href="/account/delete""#))
        #expect(html.contains(#"id="email-change-form""#))
        #expect(!html.contains("email-change-confirm-form"))
    }

    @Test func aPendingChangeAsksForItsCodeAndNamesTheAddressEscaped() {
        let html = Self.account(.en, pending: "new<b>@example.com")
        #expect(html.contains("email-change-confirm-form"))
        #expect(html.contains(#"autocomplete="one-time-code""#))
        #expect(html.contains("new&lt;b&gt;@example.com"))
        #expect(!html.contains("new<b>"))
    }

    @Test(arguments: [
        (PageLanguage.en, "This cannot be undone.", "Type your email address to confirm"),
        (.ja, "この操作は取り消せません。", "確認のためメールアドレスを入力してください"),
    ])
    func theDeletionPageWarnsAndAsksForTheAddress(
        _ language: PageLanguage, irreversible: String, label: String
    ) {
        let html = LoginPages.accountDeletion(
            AccountDeletionPage(
                context: Self.context(language, path: "/account/delete"), email: "a\"b@example.com",
                hasPassword: true, hasPasskeys: false))
        #expect(html.contains(irreversible))
        #expect(html.contains(label))
        #expect(html.contains(#"data-email="a&quot;b@example.com""#))
        // The re-authentication prompt offers what the account has: a password, no passkey.
        #expect(html.contains("reauth-password-form"))
        #expect(!html.contains("reauth-passkey"))
        #expect(html.contains(#"<meta name="csrf-token" content="TOKEN">"#))
    }

    @Test func theUndoPageIsAFormSoOpeningTheLinkChangesNothing() {
        let html = LoginPages.emailChangeUndo(Self.context(.en), token: "tok\"en")
        #expect(html.contains(#"<form method="post" action="/account/email/undo""#))
        #expect(html.contains(#"<input type="hidden" name="csrf_token" value="TOKEN">"#))
        #expect(html.contains(#"<input type="hidden" name="token" value="tok&quot;en">"#))
    }

    @Test func everyLifecycleTextIsTranslated() {
        let keys: [LifecycleText] = [
            .emailChangeHeading, .emailChangeLead, .newEmail, .sendCode, .pendingChange, .confirmCode, .code,
            .confirm, .cancelChange, .emailChangeSent, .emailChanged, .dataHeading, .dataLead, .downloadData,
            .deleteHeading, .deleteLead, .deleteLink, .deleteTitle, .deleteWarning, .deleteWhat, .deleteApps,
            .deleteIrreversible, .deleteConfirmLabel, .deleteButton, .deleteConfirmMismatch, .deletedTitle,
            .deletedLead, .backToSignIn, .undoTitle, .undoLead, .undoButton, .undoneTitle, .undoneLead,
            .undoInvalid,
        ]
        for key in keys {
            #expect(
                !key.text(.en).isEmpty && !key.text(.ja).isEmpty && key.text(.en) != key.text(.ja), "\(key)")
        }
    }
}
