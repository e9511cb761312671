import Foundation
import Testing

@testable import LoginPages

@Suite("Account page: profile fields")
struct ProfileSectionTests {
    static func page(_ language: PageLanguage, profile: ProfileForm = ProfileForm()) -> String {
        LoginPages.account(
            AccountPage(
                context: PageContext(
                    language: language, siteName: "Example ID", csrfToken: "TOKEN", path: "/account"),
                displayName: "A", email: "a@example.com", rpID: "example.com", userID: "dQ",
                hasPassword: true,
                canRemovePassword: false, passkeys: [], sessions: [], profile: profile))
    }

    @Test func everyFieldHasItsLabelAutofillTokenHintAndHiddenError() {
        let html = Self.page(.en, profile: ProfileForm(givenName: "Ann", locale: "en-GB"))
        for (name, label, token) in [
            ("given_name", "Given name", "given-name"), ("family_name", "Family name", "family-name"),
            ("preferred_username", "Username", "username"), ("locale", "Language", "language"),
            ("picture", "Picture URL", "photo"),
        ] {
            #expect(html.contains(#"<label for="\#(name)">\#(label)</label>"#), "\(name)")
            #expect(html.contains(#"autocomplete="\#(token)""#), "\(token)")
            #expect(html.contains(#"id="\#(name)-hint""#))
            #expect(html.contains(#"aria-describedby="\#(name)-hint \#(name)-error""#))
        }
        #expect(html.contains(#"type="url""#))
        #expect(html.contains(#"value="Ann""#))
        #expect(html.contains(#"value="en-GB""#))
        #expect(html.contains("Enter a language tag such as en, en-GB or ja-JP."))
        #expect(html.contains(#"autocomplete="name""#))
    }

    @Test func japaneseLabelsHintsAndErrors() {
        let html = Self.page(.ja)
        for text in ["名", "姓", "ユーザー名", "言語", "プロフィール画像の URL", "en や ja-JP などの言語タグ", "https:// で始まり"] {
            #expect(html.contains(text), "\(text)")
        }
        #expect(!html.contains("Given name"))
    }

    @Test func hostileValuesAreEscaped() {
        let html = Self.page(.en, profile: ProfileForm(givenName: "\"><script>alert(1)</script>"))
        #expect(!html.contains("<script>alert(1)"))
    }

    @Test(arguments: PageLanguage.allCases, ProfileStrings.Key.allCases)
    func everyStringIsTranslated(_ language: PageLanguage, _ key: ProfileStrings.Key) {
        #expect(!ProfileStrings(language)[key].isEmpty)
    }
}
