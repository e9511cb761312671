import Testing

@testable import AuthServer

/// The profile fields' rules (OpenID Connect Core §5.1) with plain values: no database.
@Suite("Profile fields: names, username, locale, picture")
struct ProfileFieldsTests {
    typealias Field = ProfileFields.Field

    @Test(arguments: [Field.givenName, .familyName])
    func namesUpTo200CharactersWithoutControlCharacters(_ field: Field) throws {
        #expect(try ProfileFields.validate("  山田  ", for: field) == "山田")
        #expect(try ProfileFields.validate(String(repeating: "a", count: 200), for: field) != nil)
        // 200 Unicode scalars, as PostgreSQL's length() counts them, not grapheme clusters.
        #expect(throws: ProfileFields.Invalid(field: field)) {
            try ProfileFields.validate(String(repeating: "e\u{301}", count: 101), for: field)
        }
        #expect(throws: ProfileFields.Invalid(field: field)) {
            try ProfileFields.validate(String(repeating: "a", count: 201), for: field)
        }
        for hostile in ["Ann\nAdmin", "Ann\u{1B}[31m", "Ann\u{0}", "Ann\u{7F}"] {
            #expect(throws: ProfileFields.Invalid(field: field)) {
                try ProfileFields.validate(hostile, for: field)
            }
        }
    }

    @Test func preferredUsernameUpTo64Characters() throws {
        #expect(try ProfileFields.validate("j.doe@example", for: .preferredUsername) == "j.doe@example")
        #expect(try ProfileFields.validate(String(repeating: "u", count: 64), for: .preferredUsername) != nil)
        #expect(throws: ProfileFields.Invalid(field: .preferredUsername)) {
            try ProfileFields.validate(String(repeating: "u", count: 65), for: .preferredUsername)
        }
        #expect(throws: ProfileFields.Invalid(field: .preferredUsername)) {
            try ProfileFields.validate("tab\there", for: .preferredUsername)
        }
    }

    @Test(arguments: [
        ("en", "en"), ("ja-JP", "ja-JP"), ("JA-jp", "ja-JP"), ("zh-hant-tw", "zh-Hant-TW"),
        ("es-419", "es-419"),
        ("sr-Latn-RS", "sr-Latn-RS"), ("de-CH-1996", "de-CH-1996"), ("en-US-x-twain", "en-US-x-twain"),
        ("zh-yue-HK", "zh-yue-HK"), ("en-a-bbb-x-a-ccc", "en-a-bbb-x-a-ccc"), ("x-whatever", "x-whatever"),
    ])
    func wellFormedLanguageTagsInCanonicalCase(_ given: String, _ canonical: String) throws {
        #expect(try ProfileFields.validate(given, for: .locale) == canonical)
    }

    @Test(arguments: [
        "ja_JP", "e", "en-Latn-Latn", "en-", "-en", "en--US", "en-US-", "123", "en US", "日本語",
        "de-1996-1996", "en-a-bbb-a-ccc", "en-a", "en-x", "x", "en-US-toolongvariant",
        String(repeating: "en-", count: 30) + "en",
    ])
    func malformedLanguageTagsAreRefused(_ tag: String) {
        #expect(throws: ProfileFields.Invalid(field: .locale)) {
            try ProfileFields.validate(tag, for: .locale)
        }
    }

    @Test func pictureIsAnAbsoluteHTTPSURLWithoutCredentials() throws {
        for url in [
            "https://example.com/me.png", "HTTPS://cdn.example.com/a/b.jpg?size=200#x",
            "https://[::1]:8443/p.png",
        ] {
            #expect(try ProfileFields.validate(url, for: .picture) == url)
        }
        #expect(
            try ProfileFields.validate(
                "https://example.com/" + String(repeating: "a", count: 2028), for: .picture)
                != nil)
        for url in [
            "http://example.com/me.png", "javascript:alert(1)", "data:image/png;base64,AAAA",
            "//example.com/a.png",
            "/me.png", "https://", "https:///path", "https://user:secret@example.com/me.png",
            "https://user@example.com/me.png", "https://example.com/a b.png", "https://example.com/a\nb",
            "file:///etc/passwd", "https://example.com/" + String(repeating: "a", count: 2029),
        ] {
            #expect(throws: ProfileFields.Invalid(field: .picture), "\(url)") {
                try ProfileFields.validate(url, for: .picture)
            }
        }
    }

    @Test(arguments: Field.allCases)
    func anEmptyValueRemovesTheField(_ field: Field) throws {
        #expect(try ProfileFields.validate("", for: field) == nil)
        #expect(try ProfileFields.validate("   ", for: field) == nil)
    }

    @Test func aChangeTouchesOnlyTheFieldsItNames() {
        let stored = ProfileFields(givenName: "Ann", familyName: "Lee", locale: "en")
        var change = ProfileChange()
        change.fields[.givenName] = .some("Anna")
        change.fields[.locale] = .some(nil)
        #expect(change.applied(to: stored) == ProfileFields(givenName: "Anna", familyName: "Lee"))
    }
}
