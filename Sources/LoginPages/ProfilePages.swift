/// The profile claims of the account page (OpenID Connect Core §5.1): what the account holder
/// may fill in beside the display name. Empty means "not set"; apps then do not receive it.
public struct ProfileForm: Sendable, Equatable {
    public var givenName: String
    public var familyName: String
    public var preferredUsername: String
    public var locale: String
    public var picture: String

    public init(
        givenName: String = "", familyName: String = "", preferredUsername: String = "", locale: String = "",
        picture: String = ""
    ) {
        self.givenName = givenName
        self.familyName = familyName
        self.preferredUsername = preferredUsername
        self.locale = locale
        self.picture = picture
    }
}

/// The profile section's labels, hints and errors, in English and Japanese.
public struct ProfileStrings: Sendable {
    public enum Key: String, Sendable, CaseIterable {
        case profileLead
        case givenName, familyName, preferredUsername, locale, picture
        case givenNameHint, familyNameHint, preferredUsernameHint, localeHint, pictureHint
        case invalidName, invalidUsername, invalidLocale, invalidPicture
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
        case .profileLead:
            "Apps you sign in to with this account receive these details when you allow them to see your profile. Leave a field empty to remove it."
        case .givenName: "Given name"
        case .familyName: "Family name"
        case .preferredUsername: "Username"
        case .locale: "Language"
        case .picture: "Picture URL"
        case .givenNameHint: "Optional. Up to 200 characters."
        case .familyNameHint: "Optional. Up to 200 characters."
        case .preferredUsernameHint: "Optional. How apps may address you, up to 64 characters."
        case .localeHint: "Optional. A language tag such as en or ja-JP."
        case .pictureHint: "Optional. An https:// address of an image of you."
        case .invalidName: "Enter at most 200 characters, without control characters."
        case .invalidUsername: "Enter at most 64 characters, without control characters."
        case .invalidLocale: "Enter a language tag such as en, en-GB or ja-JP."
        case .invalidPicture: "Enter an address that starts with https://, without a user name or password."
        }
    }

    static func japanese(_ key: Key) -> String {
        switch key {
        case .profileLead:
            "このアカウントでサインインするアプリは、プロフィールの閲覧を許可したときにこれらの情報を受け取ります。空欄にすると削除されます。"
        case .givenName: "名"
        case .familyName: "姓"
        case .preferredUsername: "ユーザー名"
        case .locale: "言語"
        case .picture: "プロフィール画像の URL"
        case .givenNameHint: "任意。200 文字以内。"
        case .familyNameHint: "任意。200 文字以内。"
        case .preferredUsernameHint: "任意。アプリでの呼び名。64 文字以内。"
        case .localeHint: "任意。en や ja-JP などの言語タグ。"
        case .pictureHint: "任意。画像の https:// で始まるアドレス。"
        case .invalidName: "制御文字を含まない 200 文字以内で入力してください。"
        case .invalidUsername: "制御文字を含まない 64 文字以内で入力してください。"
        case .invalidLocale: "en、en-GB、ja-JP などの言語タグを入力してください。"
        case .invalidPicture: "https:// で始まり、ユーザー名やパスワードを含まないアドレスを入力してください。"
        }
    }
}

extension LoginPages {
    /// One optional profile input: its label, its hint, and the error the page script shows
    /// (hidden until the API names this field in `invalid_<name>`).
    static func profileField(
        name: String, label: String, type: String = "text", autocomplete: String, value: String,
        maxLength: Int, hint: String, error: String
    ) -> HTMLNode {
        H.div(
            ["class": "field"],
            [
                H.el("label", ["for": name], [.text(label)]),
                H.el(
                    "input",
                    [
                        "id": name, "type": type, "name": name, "autocomplete": autocomplete, "value": value,
                        "maxlength": String(maxLength), "aria-describedby": "\(name)-hint \(name)-error",
                        "autocapitalize": type == "url" || name == "preferred_username" || name == "locale"
                            ? "none" : nil,
                        "spellcheck": type == "text" && name != "preferred_username" && name != "locale"
                            ? nil : "false",
                    ]),
                H.p(["class": "hint", "id": "\(name)-hint"], [.text(hint)]),
                H.p(
                    [
                        "class": "hint field-error", "id": "\(name)-error", "role": "alert",
                        "hidden": HTMLNode.on,
                    ],
                    [.text(error)]),
            ])
    }

    /// The profile section of `/account`: the display name (`name` claim) and the optional
    /// claims, saved together by `PATCH /api/account`. Autofill tokens from the HTML
    /// standard's list: `language` takes a BCP 47 tag, `photo` a URL.
    static func profileSection(_ page: AccountPage, _ s: Strings) -> HTMLNode {
        let p = ProfileStrings(page.context.language)
        let form = page.profile
        return H.el(
            "section", ["aria-labelledby": "profile-heading"],
            [
                H.el("h2", ["id": "profile-heading"], [.text(s[.profile])]),
                H.p(["class": "hint"], [.text(p[.profileLead])]),
                H.el(
                    "form", ["id": "profile-form", "class": "stack", "novalidate": HTMLNode.on],
                    [
                        field(
                            id: "display_name", label: s[.displayName], type: "text",
                            name: "display_name", autocomplete: "name", value: page.displayName,
                            extra: "200"),
                        profileField(
                            name: "given_name", label: p[.givenName], autocomplete: "given-name",
                            value: form.givenName, maxLength: 200, hint: p[.givenNameHint],
                            error: p[.invalidName]),
                        profileField(
                            name: "family_name", label: p[.familyName], autocomplete: "family-name",
                            value: form.familyName, maxLength: 200, hint: p[.familyNameHint],
                            error: p[.invalidName]),
                        profileField(
                            name: "preferred_username", label: p[.preferredUsername],
                            autocomplete: "username",
                            value: form.preferredUsername, maxLength: 64, hint: p[.preferredUsernameHint],
                            error: p[.invalidUsername]),
                        profileField(
                            name: "locale", label: p[.locale], autocomplete: "language", value: form.locale,
                            maxLength: 64, hint: p[.localeHint], error: p[.invalidLocale]),
                        profileField(
                            name: "picture", label: p[.picture], type: "url", autocomplete: "photo",
                            value: form.picture, maxLength: 2048, hint: p[.pictureHint],
                            error: p[.invalidPicture]),
                        H.el("button", ["type": "submit", "class": "secondary"], [.text(s[.save])]),
                    ]),
            ])
    }
}
