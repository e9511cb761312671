import Foundation

/// A button that signs in through an upstream identity provider.
///
/// Apple's button follows its Human Interface Guidelines ("Sign in with Apple"): black (white
/// in the dark scheme), the Apple logo before the title, Apple's own title in the page's
/// language ("Sign in with Apple" on /signin, "Continue with Apple" on /signup), the same size
/// as the page's other buttons. Other providers get a neutral button with their configured
/// label and optional icon.
public struct UpstreamButton: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case apple
        case oidc(label: String, iconURL: String?)
    }

    /// The configured provider id (`/upstream/<id>/start`).
    public var id: String
    public var kind: Kind

    public init(id: String, kind: Kind) {
        self.id = id
        self.kind = kind
    }
}

/// The sentences of the upstream sign-in, in English and Japanese.
public struct UpstreamStrings: Sendable {
    public enum Key: String, Sendable, CaseIterable {
        case signInWithApple, continueWithApple, continueWith
        case failedTitle, failed, cancelled, expired, otherBrowser, disabled
        case alreadyLinkedElsewhere
        case proveTitle, proveLead, proveButton
        case linkTitle, linkLead, linkButton, linkWrongAccount
        case identities, identitiesIntro, noIdentities, linkAnother, unlink, lastWayIn, unlinked
        case reauthenticateToLink, continueButton, tooMany
    }

    public let language: PageLanguage
    public init(_ language: PageLanguage) { self.language = language }

    public subscript(_ key: Key) -> String {
        language == .ja ? Self.japanese(key) : Self.english(key)
    }

    /// `continueWith` with the provider's label.
    public func continueWith(_ label: String) -> String {
        self[.continueWith].replacingOccurrences(of: "{label}", with: label)
    }

    static func english(_ key: Key) -> String {
        switch key {
        case .signInWithApple: "Sign in with Apple"
        case .continueWithApple: "Continue with Apple"
        case .continueWith: "Continue with {label}"
        case .failedTitle: "Sign-in did not complete"
        case .failed: "The sign-in with the other provider could not be completed. Please try again."
        case .cancelled: "The sign-in was cancelled at the other provider."
        case .expired: "This sign-in link has expired or was already used. Please start again."
        case .otherBrowser: "This sign-in was started in another browser. Please start again here."
        case .disabled: "This account is disabled."
        case .alreadyLinkedElsewhere: "This identity is already linked to another account."
        case .proveTitle: "Sign in to link your account"
        case .proveLead:
            "An account with the address {email} already exists. Sign in to it with your passkey or password to link {provider} to it."
        case .proveButton: "Sign in to link"
        case .linkTitle: "Link {provider}"
        case .linkLead: "Link the {provider} identity {email} to your account {account}?"
        case .linkButton: "Link {provider}"
        case .linkWrongAccount:
            "You signed in to a different account than the one with this address. Nothing was linked."
        case .identities: "Linked sign-in providers"
        case .identitiesIntro: "You can also sign in to this account with these providers."
        case .noIdentities: "No provider is linked."
        case .linkAnother: "Link {provider}"
        case .unlink: "Unlink"
        case .lastWayIn: "This is the only way to sign in to this account: add a passkey or a password first."
        case .unlinked: "The provider was unlinked."
        case .reauthenticateToLink: "Sign in again to link another provider."
        case .continueButton: "Continue"
        case .tooMany: "Too many new accounts were created from here. Wait a while before trying again."
        }
    }

    static func japanese(_ key: Key) -> String {
        switch key {
        case .signInWithApple: "Appleでサインイン"
        case .continueWithApple: "Appleで続ける"
        case .continueWith: "{label}で続ける"
        case .failedTitle: "ログインを完了できませんでした"
        case .failed: "外部プロバイダでのログインを完了できませんでした。もう一度お試しください。"
        case .cancelled: "外部プロバイダでログインがキャンセルされました。"
        case .expired: "このログインは期限切れか、すでに使用されています。最初からやり直してください。"
        case .otherBrowser: "このログインは別のブラウザで開始されました。このブラウザで最初からやり直してください。"
        case .disabled: "このアカウントは無効になっています。"
        case .alreadyLinkedElsewhere: "このIDはすでに別のアカウントに連携されています。"
        case .proveTitle: "ログインして連携する"
        case .proveLead: "{email} のアカウントはすでに存在します。{provider} を連携するには、パスキーまたはパスワードでそのアカウントにログインしてください。"
        case .proveButton: "ログインして連携"
        case .linkTitle: "{provider} を連携"
        case .linkLead: "{provider} のID {email} をアカウント {account} に連携しますか?"
        case .linkButton: "{provider} を連携"
        case .linkWrongAccount: "このメールアドレスのアカウントとは別のアカウントにログインしました。連携は行われていません。"
        case .identities: "連携済みのログイン方法"
        case .identitiesIntro: "これらのプロバイダでもこのアカウントにログインできます。"
        case .noIdentities: "連携しているプロバイダはありません。"
        case .linkAnother: "{provider} を連携"
        case .unlink: "連携を解除"
        case .lastWayIn: "このアカウントにログインする唯一の方法です。先にパスキーかパスワードを追加してください。"
        case .unlinked: "連携を解除しました。"
        case .reauthenticateToLink: "別のプロバイダを連携するには、もう一度ログインしてください。"
        case .continueButton: "続ける"
        case .tooMany: "ここから作成されたアカウントが多すぎます。しばらく待ってからもう一度お試しください。"
        }
    }
}

extension LoginPages {
    /// Apple's logo, drawn inline (the CSP allows no remote image and the button must work
    /// without script); `currentColor` follows the button's text.
    static var appleLogo: HTMLNode {
        H.el(
            "svg",
            [
                "class": "upstream-logo", "viewBox": "0 0 24 24", "width": "18", "height": "18",
                "aria-hidden": "true", "focusable": "false",
            ],
            [
                H.el(
                    "path",
                    [
                        "fill": "currentColor",
                        "d":
                            "M12.152 6.896c-.948 0-2.415-1.078-3.96-1.04-2.04.027-3.91 1.183-4.961 3.014-2.117 3.675-.546 9.103 1.519 12.09 1.013 1.454 2.208 3.09 3.792 3.039 1.52-.065 2.09-.987 3.935-.987 1.831 0 2.35.987 3.96.948 1.637-.026 2.676-1.48 3.676-2.948 1.156-1.688 1.636-3.325 1.662-3.415-.039-.013-3.182-1.221-3.22-4.857-.026-3.04 2.48-4.494 2.597-4.559-1.429-2.09-3.623-2.324-4.39-2.376-2-.156-3.675 1.09-4.61 1.09zM15.53 3.83c.843-1.012 1.4-2.427 1.245-3.83-1.207.052-2.662.805-3.532 1.818-.78.896-1.454 2.338-1.273 3.714 1.338.104 2.715-.688 3.559-1.701",
                    ])
            ])
    }

    /// The upstream buttons as plain links to `/upstream/<id>/start`, which carry the page's
    /// `return_to` (the pending `/authorize` request) and `ui_locales`: no script needed.
    /// `signUp`: Apple's title for creating an account ("Continue with Apple").
    static func upstreamButtons(
        _ buttons: [UpstreamButton], returnTo: String?, uiLocales: String?, signUp: Bool,
        language: PageLanguage
    ) -> HTMLNode {
        guard !buttons.isEmpty else { return .fragment([]) }
        let s = UpstreamStrings(language)
        let links: [HTMLNode] = buttons.map { button in
            let href = withQuery(
                "/upstream/\(button.id)/start", [("return_to", returnTo), ("ui_locales", uiLocales)])
            switch button.kind {
            case .apple:
                return H.el(
                    "a",
                    [
                        "class": "button upstream apple", "href": href, "id": "upstream-\(button.id)",
                        "lang": language.rawValue,
                    ],
                    [appleLogo, .text(s[signUp ? .continueWithApple : .signInWithApple])])
            case .oidc(let label, let iconURL):
                return H.el(
                    "a",
                    ["class": "button secondary upstream", "href": href, "id": "upstream-\(button.id)"],
                    [
                        iconURL.map {
                            H.el(
                                "img",
                                [
                                    "class": "upstream-logo", "src": $0, "alt": "", "width": "18",
                                    "height": "18",
                                ])
                        } ?? .fragment([]),
                        .text(s.continueWith(label)),
                    ])
            }
        }
        return H.div(
            ["class": "upstream-buttons", "id": "upstream-buttons"],
            [H.div(["class": "divider"], [H.el("span", [:], [.text(Strings(language)[.or])])])] + links)
    }
}
