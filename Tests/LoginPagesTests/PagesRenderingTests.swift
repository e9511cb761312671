import Foundation
import Testing

@testable import LoginPages

@Suite("Pages")
struct PagesRenderingTests {
    static func context(_ language: PageLanguage = .en) -> PageContext {
        PageContext(language: language, siteName: "Example ID", csrfToken: "TOKEN", path: "/signin")
    }

    static let hostile = "\"><script>alert(1)</script><img src=x onerror=alert(2)>"

    /// An `acr` step-up: the page says a passkey is wanted, in both languages, and still
    /// offers passkey sign-in.
    @Test func stepUpMessage() {
        var page = SignInPage(context: Self.context())
        #expect(!LoginPages.signIn(page).contains("step-up-notice"))
        page.stepUp = true
        let english = LoginPages.signIn(page)
        #expect(english.contains("This app asks you to confirm with a passkey."))
        #expect(english.contains(#"id="passkey-button""#))
        page.context = Self.context(.ja)
        #expect(LoginPages.signIn(page).contains("このアプリはパスキーによる確認を求めています。"))
    }

    @Test func signInFieldsHaveAutofillAttributesInFocusOrder() throws {
        let html = LoginPages.signIn(
            SignInPage(context: Self.context(), email: "ada@example.com", returnTo: "/authorize?x=1"))
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(
            html.contains(
                "<input id=\"email\" type=\"email\" name=\"email\" autocomplete=\"username webauthn\" value=\"ada@example.com\" required"
            ))
        #expect(html.contains("autocomplete=\"current-password\""))
        #expect(html.contains("<label for=\"email\">Email address</label>"))
        #expect(html.contains("<label for=\"password\">Password</label>"))
        #expect(html.contains("name=\"csrf_token\" value=\"TOKEN\""))
        #expect(html.contains("<form id=\"password-form\" method=\"post\" action=\"/signin\">"))
        #expect(
            html.contains("href=\"/signup?return_to=/authorize?x%3D1\"")
                || html.contains("href=\"/signup?return_to=/authorize?x=1\""))
        let email = try #require(html.range(of: "id=\"email\""))
        let password = try #require(html.range(of: "id=\"password\""))
        let submit = try #require(html.range(of: "type=\"submit\""))
        let passkey = try #require(html.range(of: "id=\"passkey-button\""))
        #expect(
            email.lowerBound < password.lowerBound && password.lowerBound < submit.lowerBound
                && submit.lowerBound < passkey.lowerBound)
        #expect(html.contains("role=\"alert\" aria-live=\"assertive\""))
        #expect(html.contains("<script type=\"module\" src=\"/static/js/signin.js\"></script>"))
        #expect(!html.contains("<script>"))
        #expect(!html.contains(" style="))
        #expect(!html.contains(" onclick="))
    }

    @Test func errorsAreAnnouncedInTheAlertRegion() {
        let html = LoginPages.signIn(SignInPage(context: Self.context(.ja), error: .invalidCredentials))
        #expect(
            html.contains(
                "<div id=\"status\" class=\"status error\" role=\"alert\" aria-live=\"assertive\">メールアドレスまたはパスワードが正しくありません。</div>"
            ))
        #expect(html.contains("<html lang=\"ja\">"))
    }

    @Test func signUpUsesNewPasswordAndOffersPasskeys() {
        for language in PageLanguage.allCases {
            let html = LoginPages.signUp(
                SignUpPage(context: Self.context(language), displayName: Self.hostile))
            #expect(html.contains("autocomplete=\"new-password\""))
            #expect(html.contains("autocomplete=\"name\""))
            #expect(html.contains("id=\"passkey-signup\""))
            #expect(html.contains(Strings(language)[.signUpWithPasskey]))
            #expect(!html.contains("<script>alert"))
            #expect(!html.contains("<img src=x"))
            #expect(
                html.contains(
                    "value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;\""
                ))
        }
    }

    @Test func accountPageEscapesHostileNamesEverywhere() {
        let page = AccountPage(
            context: Self.context(), displayName: Self.hostile, email: "a@example.com", rpID: "example.com",
            userID: "dXNlcg", hasPassword: true, canRemovePassword: false,
            passkeys: [
                .init(
                    id: "p1", credentialID: "Y3JlZA", name: Self.hostile, provider: "iCloud Keychain",
                    synced: true,
                    createdAt: Date(timeIntervalSince1970: 1_700_000_000), lastUsedAt: nil)
            ],
            sessions: [
                .init(
                    id: "s1", device: Self.hostile, createdAt: Date(timeIntervalSince1970: 1_700_000_000),
                    lastSeenAt: Date(timeIntervalSince1970: 1_700_000_100), isCurrent: false)
            ])
        let html = LoginPages.account(page)
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<img src=x"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("iCloud Keychain"))
        #expect(html.contains("Synced"))
        #expect(html.contains("Never used"))
        #expect(html.contains("Nov 14, 2023 22:13 UTC"))
        #expect(html.contains("autocomplete=\"current-password\""))
        #expect(html.contains("autocomplete=\"new-password\""))
        #expect(html.contains("data-rp-id=\"example.com\""))
        // The password cannot be removed yet: the hint replaces the button.
        #expect(!html.contains("id=\"remove-password\""))
    }

    @Test func accountPageInJapaneseForAPasswordlessAccount() {
        let page = AccountPage(
            context: Self.context(.ja), displayName: "山田", email: "y@example.com", rpID: "example.com",
            userID: "dQ",
            hasPassword: false, canRemovePassword: false, passkeys: [], sessions: [])
        let html = LoginPages.account(page)
        #expect(html.contains("このアカウントにはパスワードがありません"))
        #expect(html.contains("まだパスキーがありません。"))
        #expect(!html.contains("current-password"))
    }

    @Test func accountPageOffersOnlyTheAccountsOwnWaysToReauthenticate() {
        func page(hasPassword: Bool, passkeys: Int, _ language: PageLanguage = .en) -> String {
            LoginPages.account(
                AccountPage(
                    context: Self.context(language), displayName: "A", email: "a@example.com",
                    rpID: "example.com",
                    userID: "dQ", hasPassword: hasPassword, canRemovePassword: false,
                    passkeys: (0..<passkeys).map {
                        .init(
                            id: "p\($0)", credentialID: "Y3JlZA", name: "Key", provider: nil, synced: false,
                            createdAt: Date(timeIntervalSince1970: 0), lastUsedAt: nil)
                    }, sessions: []))
        }
        let both = page(hasPassword: true, passkeys: 1)
        #expect(both.contains("<section id=\"reauthenticate\" hidden"))
        #expect(both.contains("id=\"reauth-passkey\""))
        #expect(both.contains("id=\"reauth-password-form\""))
        #expect(!page(hasPassword: true, passkeys: 0).contains("id=\"reauth-passkey\""))
        #expect(!page(hasPassword: false, passkeys: 1).contains("id=\"reauth-password-form\""))
        #expect(page(hasPassword: true, passkeys: 1, .ja).contains(Strings(.ja)[.reauthTitle]))
    }

    @Test func japaneseErrorPageTranslatesTheOAuthSentenceAndMarksTheCode() {
        let description = "Client authentication failed. The client is not registered."
        let message = OAuthErrorText.message(
            code: "invalid_client", description: description, hint: "The client is not registered.",
            language: .ja)
        #expect(message == "アプリケーションを確認できませんでした。このアプリケーションは登録されていません。")
        let html = LoginPages.error(
            ErrorPage(context: Self.context(.ja), message: message, code: "invalid_client"))
        #expect(html.contains("<html lang=\"ja\">"))
        #expect(!html.contains("Client authentication failed"))
        #expect(html.contains("<code lang=\"en\" id=\"error-code\">invalid_client</code>"))
        // A situation the page cannot translate is left out rather than shown in English.
        let unknown = OAuthErrorText.message(
            code: "invalid_request", description: "x", hint: "Something new.", language: .ja)
        #expect(unknown == "リクエストに必要な項目が欠けているか、正しくない項目があります。")
        #expect(
            OAuthErrorText.message(code: "invalid_request", description: "x y", hint: "y", language: .en)
                == "x y")
    }

    @Test func everyOAuthCodeHasAJapaneseSentence() {
        let codes = [
            "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
            "unsupported_grant_type",
            "unsupported_response_type", "invalid_scope", "access_denied", "server_error",
            "temporarily_unavailable", "login_required", "consent_required", "interaction_required",
            "account_selection_required", "request_not_supported", "request_uri_not_supported",
            "invalid_token",
            "insufficient_scope", "unsupported_token_type", "unmet_authentication_requirements",
            "invalid_target",
        ]
        for code in codes { #expect(OAuthErrorText.japanese[code] != nil, "\(code)") }
    }

    @Test func fieldsInErrorPointAtTheMessage() {
        let html = LoginPages.signIn(SignInPage(context: Self.context(.en), error: .invalidCredentials))
        #expect(
            html.contains(
                "id=\"password\" type=\"password\" name=\"password\" autocomplete=\"current-password\" required aria-invalid=\"true\" aria-describedby=\"status\""
            ))
        #expect(html.contains("aria-invalid=\"true\" aria-describedby=\"status\""))
        let clean = LoginPages.signIn(SignInPage(context: Self.context(.en)))
        #expect(!clean.contains("aria-invalid"))
        let weak = LoginPages.signUp(SignUpPage(context: Self.context(.en), error: .weakPassword))
        #expect(weak.contains("aria-invalid=\"true\" aria-describedby=\"status password-hint\""))
        #expect(weak.contains("tabindex=\"-1\" autofocus>"))
        #expect(!LoginPages.signUp(SignUpPage(context: Self.context(.en))).contains("autofocus"))
    }

    @Test func theSiteNameIsTheBannerLandmark() {
        let html = LoginPages.signIn(SignInPage(context: Self.context(.en)))
        #expect(html.contains("<header class=\"brand\">"))
    }

    @Test func errorPageShowsTheMessage() {
        let html = LoginPages.error(ErrorPage(context: Self.context(.ja), message: "<unknown client>"))
        #expect(html.contains("&lt;unknown client&gt;"))
        #expect(html.contains("ログインに戻る"))
    }
}

@Suite("Consent page")
struct ConsentPageTests {
    @Test func consentListsScopesAndPostsTheDecision() {
        for language in PageLanguage.allCases {
            let html = LoginPages.consent(
                ConsentPage(
                    context: PagesRenderingTests.context(language), clientName: PagesRenderingTests.hostile,
                    scopes: ["openid", "email", "custom:read"], accountEmail: "a@example.com",
                    action: "/authorize/consent",
                    hiddenFields: [("request_id", "r1")], switchAccountLink: "/signin?prompt=login"))
            #expect(html.contains("name=\"decision\" value=\"allow\""))
            #expect(html.contains("name=\"decision\" value=\"deny\""))
            #expect(html.contains("name=\"request_id\" value=\"r1\""))
            #expect(html.contains("name=\"csrf_token\" value=\"TOKEN\""))
            #expect(html.contains(Strings(language)[.scopeEmail]))
            #expect(html.contains("<li>custom:read</li>"))
            #expect(!html.contains("<script>alert"))
        }
    }
}
