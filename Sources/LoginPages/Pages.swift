import Foundation

/// What every page needs besides its own content.
public struct PageContext: Sendable {
    public var language: PageLanguage
    /// The product's name (the WebAuthn relying party name).
    public var siteName: String
    public var csrfToken: String
    /// Path and query of this page without `ui_locales`, for the language switch.
    public var path: String

    public init(language: PageLanguage, siteName: String, csrfToken: String, path: String) {
        self.language = language
        self.siteName = siteName
        self.csrfToken = csrfToken
        self.path = path
    }
}

/// `/signin`: password form (works without JavaScript), passkey button, and the email field
/// that offers saved passwords and passkeys in one autofill list.
public struct SignInPage: Sendable {
    public var context: PageContext
    /// Prefill (OpenID Connect `login_hint`, or the address just typed).
    public var email: String
    /// A same-origin relative path to continue to; already validated by the caller.
    public var returnTo: String?
    public var uiLocales: String?
    public var error: Strings.Key?
    /// An error sentence from outside `Strings` (the passwordless policy's), shown when
    /// `error` is nil.
    public var errorMessage: String?
    /// The application asked for a stronger authentication than the session's (`acr_values`
    /// or an `acr` claim): the page says that a passkey is wanted.
    public var stepUp = false
    /// The configured upstream providers' buttons ("Sign in with Apple", "Continue with …").
    public var upstreamButtons: [UpstreamButton] = []

    public init(
        context: PageContext, email: String = "", returnTo: String? = nil, uiLocales: String? = nil,
        error: Strings.Key? = nil
    ) {
        self.context = context
        self.email = email
        self.returnTo = returnTo
        self.uiLocales = uiLocales
        self.error = error
    }
}

/// `/signup`: password sign-up without JavaScript, or "Sign up with a passkey".
public struct SignUpPage: Sendable {
    public var context: PageContext
    public var email: String
    public var displayName: String
    public var returnTo: String?
    public var uiLocales: String?
    public var error: Strings.Key?
    /// False when the passwordless policy allows passkey sign-up only.
    public var passwordSignUp = true
    /// The configured upstream providers' buttons ("Continue with Apple", "Continue with …").
    public var upstreamButtons: [UpstreamButton] = []
    public var errorMessage: String?

    public init(
        context: PageContext, email: String = "", displayName: String = "", returnTo: String? = nil,
        uiLocales: String? = nil, error: Strings.Key? = nil
    ) {
        self.context = context
        self.email = email
        self.displayName = displayName
        self.returnTo = returnTo
        self.uiLocales = uiLocales
        self.error = error
    }
}

/// `/account`: profile, passkeys, password and sessions of the signed-in account.
public struct AccountPage: Sendable {
    public struct Passkey: Sendable {
        public var id: String
        /// base64url, for the Signal API.
        public var credentialID: String
        public var name: String
        /// From the AAGUID when known (iCloud Keychain, Google Password Manager …).
        public var provider: String?
        public var synced: Bool
        public var createdAt: Date
        public var lastUsedAt: Date?

        public init(
            id: String, credentialID: String, name: String, provider: String?, synced: Bool, createdAt: Date,
            lastUsedAt: Date?
        ) {
            self.id = id
            self.credentialID = credentialID
            self.name = name
            self.provider = provider
            self.synced = synced
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
        }
    }

    public struct Session: Sendable {
        public var id: String
        public var device: String
        public var createdAt: Date
        public var lastSeenAt: Date
        public var isCurrent: Bool

        public init(id: String, device: String, createdAt: Date, lastSeenAt: Date, isCurrent: Bool) {
            self.id = id
            self.device = device
            self.createdAt = createdAt
            self.lastSeenAt = lastSeenAt
            self.isCurrent = isCurrent
        }
    }

    public var context: PageContext
    public var displayName: String
    public var email: String
    /// RP ID and base64url user handle, for the Signal API calls the page makes.
    public var rpID: String
    public var userID: String
    public var hasPassword: Bool
    public var canRemovePassword: Bool
    public var passkeys: [Passkey]
    public var sessions: [Session]
    public var notice: Strings.Key?
    /// Set while the address is not verified: the page then asks for the emailed code.
    public var emailVerification: EmailVerificationPrompt?
    /// The optional profile claims, as stored.
    public var profile: ProfileForm
    /// The account chooser (`/accounts`), where the user switches to another account signed in
    /// in this browser or adds one.
    public var switchAccountLink = "/accounts"
    /// The linked upstream identities and the providers that may be linked; nil: no upstream
    /// provider is configured.
    public var upstream: UpstreamAccountSection?
    /// The address change waiting for its code, if any.
    public var emailChange: EmailChangePrompt?

    public init(
        context: PageContext, displayName: String, email: String, rpID: String, userID: String,
        hasPassword: Bool,
        canRemovePassword: Bool, passkeys: [Passkey], sessions: [Session], notice: Strings.Key? = nil,
        emailVerification: EmailVerificationPrompt? = nil, profile: ProfileForm = ProfileForm()
    ) {
        self.profile = profile
        self.emailVerification = emailVerification
        self.context = context
        self.displayName = displayName
        self.email = email
        self.rpID = rpID
        self.userID = userID
        self.hasPassword = hasPassword
        self.canRemovePassword = canRemovePassword
        self.passkeys = passkeys
        self.sessions = sessions
        self.notice = notice
    }
}

/// A page that explains a problem and offers a way back (also for `/authorize` errors that
/// must not be redirected to the client).
public struct ErrorPage: Sendable {
    public var context: PageContext
    public var title: String?
    public var message: String
    public var backLink: String
    /// The protocol's error code (`invalid_client`), shown under the message for whoever
    /// reports the problem; it is English in every language, and marked so.
    public var code: String?

    public init(
        context: PageContext, title: String? = nil, message: String, backLink: String = "/signin",
        code: String? = nil
    ) {
        self.context = context
        self.title = title
        self.message = message
        self.backLink = backLink
        self.code = code
    }
}

/// Renders the pages. Pure: the same view model always gives the same HTML.
public enum LoginPages {
    /// Messages the page scripts show, passed as data attributes in the page's language.
    static func messages(_ strings: Strings) -> HTMLNode {
        H.div(
            [
                "id": "messages", "hidden": HTMLNode.on,
                "data-passkey-failed": strings[.passkeyFailed],
                "data-passkey-cancelled": strings[.passkeyCancelled],
                "data-passkey-unsupported": strings[.passkeyUnsupported],
                "data-unknown-passkey": strings[.unknownPasskey],
                "data-working": strings[.working], "data-saved": strings[.saved],
                "data-passkey-added": strings[.passkeyAdded],
                "data-password-changed": strings[.passwordChanged],
                "data-confirm-delete": strings[.confirmDelete],
                "data-confirm-remove-password": strings[.confirmRemovePassword], "data-busy": strings[.busy],
                "data-csrf-failed": strings[.csrfFailed],
                "data-invalid-credentials": strings[.invalidCredentials],
                "data-too-many-attempts": strings[.passwordLocked],
                "data-invalid-email": strings[.invalidEmail],
                "data-invalid-display-name": strings[.invalidDisplayName],
                "data-weak-password": strings[.weakPassword],
                "data-wrong-password": strings[.wrongPassword],
                "data-request-failed": strings[.requestFailed],
                "data-other-sessions-ended": RecoveryStrings(strings.language)[.otherSessionsEnded],
                "data-passkey-required": RecoveryStrings(strings.language)[.passkeyRequired],
            ])
    }

    /// The live region for errors. `takesFocus`: a refused form moves focus to the message
    /// (`tabindex="-1"` plus `autofocus`, so this works without script too), so that a keyboard
    /// or screen-reader user starts from the reason (WCAG 2.1 SC 3.3.1).
    static func status(_ message: String?, takesFocus: Bool = false) -> HTMLNode {
        let focus = takesFocus && message != nil
        return H.div(
            [
                "id": "status", "class": message == nil ? "status" : "status error", "role": "alert",
                "aria-live": "assertive", "tabindex": focus ? "-1" : nil,
                "autofocus": focus ? HTMLNode.on : nil,
            ],
            message.map { [.text($0)] } ?? [])
    }

    /// `invalid`: the field is the cause of the error in `#status`; it says so with
    /// `aria-invalid` and points at the message with `aria-describedby` (WCAG 2.1 SC 3.3.1).
    static func field(
        id: String, label: String, type: String, name: String, autocomplete: String, value: String? = nil,
        required: Bool = true, hint: String? = nil, extra: String? = nil, invalid: Bool = false
    ) -> HTMLNode {
        var described: [String] = []
        if invalid { described.append("status") }
        if hint != nil { described.append("\(id)-hint") }
        return H.div(
            ["class": "field"],
            [
                H.el("label", ["for": id], [.text(label)]),
                H.el(
                    "input",
                    [
                        "id": id, "type": type, "name": name, "autocomplete": autocomplete, "value": value,
                        "required": required ? HTMLNode.on : nil,
                        "aria-invalid": invalid ? "true" : nil,
                        "aria-describedby": described.isEmpty ? nil : described.joined(separator: " "),
                        "autocapitalize": type == "email" || type == "password" ? "none" : nil,
                        "spellcheck": type == "email" ? "false" : nil, "maxlength": extra,
                    ]),
                hint.map { H.p(["class": "hint", "id": "\(id)-hint"], [.text($0)]) } ?? .fragment([]),
            ])
    }

    static func withQuery(_ path: String, _ items: [(String, String?)]) -> String {
        var components = URLComponents()
        components.path = path
        let present = items.compactMap { item in item.1.map { URLQueryItem(name: item.0, value: $0) } }
        if !present.isEmpty { components.queryItems = present }
        return components.string ?? path
    }

    public static func signIn(_ page: SignInPage) -> String {
        let s = Strings(page.context.language)
        let content: [HTMLNode] = [
            H.el("h1", [:], [.text(s[.signInTitle])]),
            H.p(["class": "subtitle"], [.text(s[.signInSubtitle])]),
            page.stepUp
                ? H.p(["class": "status info", "id": "step-up-notice"], [.text(s[.stepUpPasskey])])
                : .fragment([]),
            status(page.error.map { s[$0] } ?? page.errorMessage),
            H.el(
                "form", ["id": "password-form", "method": "post", "action": "/signin"],
                [
                    H.hidden("csrf_token", page.context.csrfToken),
                    H.hidden("return_to", page.returnTo),
                    H.hidden("ui_locales", page.uiLocales),
                    field(
                        id: "email", label: s[.email], type: "email", name: "email",
                        autocomplete: "username webauthn",
                        value: page.email, invalid: page.error == .invalidCredentials),
                    field(
                        id: "password", label: s[.password], type: "password", name: "password",
                        autocomplete: "current-password", invalid: page.error == .invalidCredentials),
                    H.el("button", ["type": "submit", "class": "primary"], [.text(s[.signIn])]),
                    H.p(
                        ["class": "switch"],
                        [
                            H.el(
                                "a",
                                [
                                    "href": withQuery("/recover", [("ui_locales", page.uiLocales)]),
                                    "id": "recover-link",
                                ],
                                [.text(RecoveryStrings(page.context.language)[.cantSignIn])])
                        ]),
                ]),
            H.div(
                ["class": "divider", "data-requires-passkeys": "", "hidden": HTMLNode.on],
                [H.el("span", [:], [.text(s[.or])])]),
            H.el(
                "button",
                [
                    "type": "button", "id": "passkey-button", "class": "secondary passkey",
                    "data-requires-passkeys": "", "hidden": HTMLNode.on,
                ],
                [
                    H.el("span", ["class": "passkey-icon", "aria-hidden": "true"], []),
                    .text(s[.signInWithPasskey]),
                ]),
            upstreamButtons(
                page.upstreamButtons, returnTo: page.returnTo, uiLocales: page.uiLocales, signUp: false,
                language: page.context.language),
            H.p(
                ["class": "switch"],
                [
                    .text(s[.newHere] + " "),
                    H.el(
                        "a",
                        [
                            "href": withQuery(
                                "/signup", [("return_to", page.returnTo), ("ui_locales", page.uiLocales)])
                        ],
                        [.text(s[.createAccount])]),
                ]),
            messages(s),
        ]
        return Layout(
            language: page.context.language, title: s[.signInTitle], siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: "signin.js",
            bodyAttributes: [("data-page", "signin"), ("data-return-to", page.returnTo ?? "/account")],
            languageLinkBase: page.context.path
        ).render(content)
    }

    public static func signUp(_ page: SignUpPage) -> String {
        let s = Strings(page.context.language)
        let content: [HTMLNode] = [
            H.el("h1", [:], [.text(s[.signUpTitle])]),
            H.p(["class": "subtitle"], [.text(s[.signUpSubtitle])]),
            status(page.error.map { s[$0] } ?? page.errorMessage, takesFocus: true),
            H.el(
                "form", ["id": "signup-form", "method": "post", "action": "/signup"],
                [
                    H.hidden("csrf_token", page.context.csrfToken),
                    H.hidden("return_to", page.returnTo),
                    H.hidden("ui_locales", page.uiLocales),
                    field(
                        id: "email", label: s[.email], type: "email", name: "email", autocomplete: "username",
                        value: page.email, invalid: page.error == .invalidEmail),
                    field(
                        id: "display_name", label: s[.displayName], type: "text", name: "display_name",
                        autocomplete: "name",
                        value: page.displayName, extra: "200", invalid: page.error == .invalidDisplayName),
                    H.el(
                        "button",
                        [
                            "type": "button", "id": "passkey-signup", "class": "primary passkey",
                            "data-requires-passkeys": "", "hidden": HTMLNode.on,
                        ],
                        [
                            H.el("span", ["class": "passkey-icon", "aria-hidden": "true"], []),
                            .text(s[.signUpWithPasskey]),
                        ]),
                    page.passwordSignUp
                        ? .fragment([
                            H.div(
                                ["class": "divider", "data-requires-passkeys": "", "hidden": HTMLNode.on],
                                [H.el("span", [:], [.text(s[.orUsePassword])])]),
                            field(
                                id: "password", label: s[.password], type: "password", name: "password",
                                autocomplete: "new-password",
                                hint: s[.passwordHint], invalid: page.error == .weakPassword),
                            H.el(
                                "button", ["type": "submit", "class": "secondary", "id": "password-signup"],
                                [.text(s[.createAccountButton])]),
                        ])
                        : .fragment([]),
                ]),
            upstreamButtons(
                page.upstreamButtons, returnTo: page.returnTo, uiLocales: page.uiLocales, signUp: true,
                language: page.context.language),
            H.p(
                ["class": "switch"],
                [
                    .text(s[.haveAccount] + " "),
                    H.el(
                        "a",
                        [
                            "href": withQuery(
                                "/signin", [("return_to", page.returnTo), ("ui_locales", page.uiLocales)])
                        ],
                        [.text(s[.signIn])]),
                ]),
            messages(s),
        ]
        return Layout(
            language: page.context.language, title: s[.signUpTitle], siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: "signup.js",
            bodyAttributes: [("data-page", "signup"), ("data-return-to", page.returnTo ?? "/account")],
            languageLinkBase: page.context.path
        ).render(content)
    }

    /// The prompt the page's script shows when a credential change answers
    /// `reauthentication_required`: the account's passkey, or its password, then the change
    /// is tried again.
    static func reauthenticationSection(_ page: AccountPage, _ s: Strings) -> HTMLNode {
        var choices: [HTMLNode] = []
        if !page.passkeys.isEmpty {
            choices.append(
                H.el(
                    "button", ["type": "button", "id": "reauth-passkey", "class": "primary passkey"],
                    [
                        H.el("span", ["class": "passkey-icon", "aria-hidden": "true"], []),
                        .text(s[.reauthWithPasskey]),
                    ]))
        }
        if page.hasPassword {
            choices.append(
                H.el(
                    "form", ["id": "reauth-password-form", "class": "stack"],
                    [
                        H.el(
                            "input",
                            [
                                "type": "text", "name": "username", "autocomplete": "username",
                                "value": page.email, "hidden": HTMLNode.on,
                            ]),
                        field(
                            id: "reauth_password", label: s[.password], type: "password", name: "password",
                            autocomplete: "current-password"),
                        H.el(
                            "button", ["type": "submit", "class": "secondary"], [.text(s[.reauthContinue])]),
                    ]))
        }
        return H.el(
            "section",
            [
                "id": "reauthenticate", "hidden": HTMLNode.on, "aria-labelledby": "reauth-heading",
                "class": "reauthenticate",
            ],
            [
                H.el("h2", ["id": "reauth-heading"], [.text(s[.reauthTitle])]),
                H.p(["class": "hint"], [.text(s[.reauthLead])]),
            ] + choices + [
                H.el(
                    "button", ["type": "button", "id": "reauth-cancel", "class": "ghost"], [.text(s[.cancel])]
                )
            ])
    }

    public static func account(_ page: AccountPage) -> String {
        let s = Strings(page.context.language)
        let language = page.context.language
        let passkeyItems: [HTMLNode] = page.passkeys.map { passkey in
            var badges: [HTMLNode] = []
            if let provider = passkey.provider {
                badges.append(H.el("span", ["class": "badge"], [.text(provider)]))
            }
            badges.append(
                H.el(
                    "span", ["class": passkey.synced ? "badge synced" : "badge"],
                    [.text(passkey.synced ? s[.synced] : s[.deviceBound])]))
            return H.el(
                "li",
                [
                    "class": "item passkey-item", "data-id": passkey.id,
                    "data-credential-id": passkey.credentialID,
                ],
                [
                    H.div(
                        ["class": "item-main"],
                        [
                            H.div(
                                ["class": "item-title"],
                                [H.el("strong", ["class": "passkey-name"], [.text(passkey.name)])] + badges),
                            H.p(
                                ["class": "meta"],
                                [
                                    .text(s[.created] + " "), DateText.node(passkey.createdAt, language),
                                    passkey.lastUsedAt.map {
                                        .fragment([
                                            .text(" · " + s[.lastUsed] + " "), DateText.node($0, language),
                                        ])
                                    }
                                        ?? .text(" · " + s[.neverUsed]),
                                ]),
                            H.el(
                                "form",
                                ["class": "rename-form", "hidden": HTMLNode.on, "data-id": passkey.id],
                                [
                                    H.el(
                                        "label", ["for": "rename-\(passkey.id)", "class": "visually-hidden"],
                                        [.text(s[.passkeyName])]),
                                    H.el(
                                        "input",
                                        [
                                            "id": "rename-\(passkey.id)", "name": "name",
                                            "value": passkey.name, "maxlength": "100",
                                            "required": HTMLNode.on, "autocomplete": "off",
                                        ]),
                                    H.el(
                                        "button", ["type": "submit", "class": "small primary"],
                                        [.text(s[.save])]),
                                    H.el(
                                        "button", ["type": "button", "class": "small ghost rename-cancel"],
                                        [.text(s[.cancel])]),
                                ]),
                        ]),
                    H.div(
                        ["class": "item-actions"],
                        [
                            H.el(
                                "button",
                                [
                                    "type": "button", "class": "small ghost rename", "data-id": passkey.id,
                                    "aria-label": "\(s[.rename]): \(passkey.name)",
                                ], [.text(s[.rename])]),
                            H.el(
                                "button",
                                [
                                    "type": "button", "class": "small danger delete", "data-id": passkey.id,
                                    "aria-label": "\(s[.delete]): \(passkey.name)",
                                ], [.text(s[.delete])]),
                        ]),
                ])
        }
        let passwordSection: [HTMLNode]
        if page.hasPassword {
            passwordSection = [
                H.el(
                    "form", ["id": "password-change-form", "class": "stack"],
                    [
                        H.el(
                            "input",
                            [
                                "type": "text", "name": "username", "autocomplete": "username",
                                "value": page.email, "hidden": HTMLNode.on,
                            ]),
                        field(
                            id: "current_password", label: s[.currentPassword], type: "password",
                            name: "current_password", autocomplete: "current-password"),
                        field(
                            id: "new_password", label: s[.newPassword], type: "password",
                            name: "new_password", autocomplete: "new-password", hint: s[.passwordHint]),
                        H.el(
                            "button", ["type": "submit", "class": "secondary"], [.text(s[.changePassword])]),
                    ]),
                page.canRemovePassword
                    ? H.el(
                        "button", ["type": "button", "id": "remove-password", "class": "danger"],
                        [.text(s[.removePassword])])
                    : H.p(["class": "hint"], [.text(s[.removePasswordHint])]),
            ]
        } else {
            passwordSection = [
                H.p(["class": "hint"], [.text(s[.noPassword])]),
                H.el(
                    "form", ["id": "password-change-form", "class": "stack"],
                    [
                        H.el(
                            "input",
                            [
                                "type": "text", "name": "username", "autocomplete": "username",
                                "value": page.email, "hidden": HTMLNode.on,
                            ]),
                        field(
                            id: "new_password", label: s[.newPassword], type: "password",
                            name: "new_password", autocomplete: "new-password", hint: s[.passwordHint]),
                        H.el("button", ["type": "submit", "class": "secondary"], [.text(s[.setPassword])]),
                    ]),
            ]
        }
        let sessionItems: [HTMLNode] = page.sessions.map { session in
            H.el(
                "li", ["class": "item", "data-id": session.id],
                [
                    H.div(
                        ["class": "item-main"],
                        [
                            H.div(
                                ["class": "item-title"],
                                [
                                    H.el("strong", [:], [.text(session.device)]),
                                    session.isCurrent
                                        ? H.el("span", ["class": "badge synced"], [.text(s[.thisDevice])])
                                        : .fragment([]),
                                ]),
                            H.p(
                                ["class": "meta"],
                                [
                                    .text(s[.signedIn] + " "), DateText.node(session.createdAt, language),
                                    .text(" · " + s[.lastActive] + " "),
                                    DateText.node(session.lastSeenAt, language),
                                ]),
                        ]),
                    session.isCurrent
                        ? .fragment([])
                        : H.div(
                            ["class": "item-actions"],
                            [
                                H.el(
                                    "button",
                                    ["type": "button", "class": "small ghost revoke", "data-id": session.id],
                                    [.text(s[.revoke])])
                            ]),
                ])
        }
        let content: [HTMLNode] = [
            H.div(
                ["class": "account-header"],
                [
                    H.div(
                        [:],
                        [
                            H.el("h1", [:], [.text(s[.accountTitle])]),
                            H.p(
                                ["class": "subtitle"],
                                [
                                    .text(s[.signedInAs] + " "),
                                    H.el("strong", ["id": "account-email"], [.text(page.email)]),
                                    .text(" · "),
                                    H.el(
                                        "a", ["href": page.switchAccountLink, "id": "switch-account"],
                                        [.text(ChooserText.switchAccount.text(language))]),
                                ]),
                        ]),
                    H.el(
                        "form", ["method": "post", "action": "/signout", "id": "signout-form"],
                        [
                            H.hidden("csrf_token", page.context.csrfToken),
                            H.el("button", ["type": "submit", "class": "ghost"], [.text(s[.signOut])]),
                        ]),
                ]),
            status(page.notice.map { s[$0] }),
            reauthenticationSection(page, s),
            page.emailVerification.map { emailVerificationSection($0, context: page.context) }
                ?? .fragment([]),
            profileSection(page, s),
            H.el(
                "section", ["aria-labelledby": "passkeys-heading"],
                [
                    H.el("h2", ["id": "passkeys-heading"], [.text(s[.passkeys])]),
                    H.p(["class": "hint"], [.text(s[.passkeysIntro])]),
                    page.passkeys.isEmpty
                        ? H.p(["class": "empty", "id": "no-passkeys"], [.text(s[.noPasskeys])])
                        : H.el("ul", ["class": "list", "id": "passkey-list"], passkeyItems),
                    H.el(
                        "button", ["type": "button", "id": "add-passkey", "class": "primary passkey"],
                        [
                            H.el("span", ["class": "passkey-icon", "aria-hidden": "true"], []),
                            .text(s[.addPasskey]),
                        ]),
                ]),
            H.el(
                "section", ["aria-labelledby": "password-heading"],
                [H.el("h2", ["id": "password-heading"], [.text(s[.passwordSection])])] + passwordSection),
            page.upstream.map { upstreamSection($0, context: page.context) } ?? .fragment([]),
            H.el(
                "section", ["aria-labelledby": "sessions-heading"],
                [
                    H.el("h2", ["id": "sessions-heading"], [.text(s[.sessions])]),
                    H.el("ul", ["class": "list", "id": "session-list"], sessionItems),
                    // Ends the other sessions and every app's tokens (what a recovery also offers).
                    page.sessions.contains { !$0.isCurrent }
                        ? H.el(
                            "button", ["type": "button", "id": "end-other-sessions", "class": "secondary"],
                            [.text(RecoveryStrings(language)[.endOtherSessions])])
                        : .fragment([]),
                ]),
            H.el(
                "section", ["aria-labelledby": "apps-heading"],
                [
                    H.el(
                        "h2", ["id": "apps-heading"], [.text(OAuthStrings(language: language)["appsTitle"])]),
                    H.p(["class": "hint"], [.text(OAuthStrings(language: language)["appsLead"])]),
                    H.el(
                        "a", ["class": "button secondary", "href": "/account/apps", "id": "connected-apps"],
                        [.text(OAuthStrings(language: language)["appsTitle"])]),
                ]),
            lifecycleSections(page, language),
            messages(s),
        ]
        return Layout(
            language: language, title: s[.accountTitle], siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: "account.js",
            bodyAttributes: [
                ("data-page", "account"), ("data-rp-id", page.rpID), ("data-user-id", page.userID),
                ("class", "wide"),
            ],
            languageLinkBase: page.context.path
        ).render(content)
    }

    public static func error(_ page: ErrorPage) -> String {
        let s = Strings(page.context.language)
        let title = page.title ?? s[.errorTitle]
        return Layout(
            language: page.context.language, title: title, siteName: page.context.siteName, csrfToken: nil,
            script: nil,
            languageLinkBase: page.context.path
        ).render([
            H.el("h1", [:], [.text(title)]),
            H.p(["class": "subtitle", "role": "alert"], [.text(page.message)]),
            page.code.map { code in
                H.p(
                    ["class": "hint error-code"],
                    [
                        .text(OAuthErrorText.codeLabel(page.context.language) + " "),
                        H.el("code", ["lang": "en", "id": "error-code"], [.text(code)]),
                    ])
            } ?? .fragment([]),
            H.el("a", ["class": "button secondary", "href": page.backLink], [.text(s[.backToSignIn])]),
        ])
    }
}
