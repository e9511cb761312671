import Foundation

/// `/account`'s linked identities: each with its provider, address and link date, an unlink
/// form, and a "Link <provider>" form per configured provider. Plain forms: no script needed.
public struct UpstreamAccountSection: Sendable {
    public struct Identity: Sendable {
        public var id: String
        public var providerLabel: String
        public var email: String?
        public var linkedAt: Date

        public init(id: String, providerLabel: String, email: String?, linkedAt: Date) {
            self.id = id
            self.providerLabel = providerLabel
            self.email = email
            self.linkedAt = linkedAt
        }
    }

    public struct Provider: Sendable {
        public var id: String
        public var label: String

        public init(id: String, label: String) {
            self.id = id
            self.label = label
        }
    }

    public var identities: [Identity]
    public var providers: [Provider]
    /// A message after a link or an unlink (`linked`, `unlinked`, `lastWayIn` …).
    public var notice: String?

    public init(identities: [Identity], providers: [Provider], notice: String? = nil) {
        self.identities = identities
        self.providers = providers
        self.notice = notice
    }
}

/// "An account with this address exists: sign in to it to link <provider>".
public struct UpstreamProveControlPage: Sendable {
    public var context: PageContext
    public var providerLabel: String
    public var email: String
    /// `/signin` with `prompt=login`, the address as `login_hint`, and `/upstream/link` to return to.
    public var signInLink: String

    public init(context: PageContext, providerLabel: String, email: String, signInLink: String) {
        self.context = context
        self.providerLabel = providerLabel
        self.email = email
        self.signInLink = signInLink
    }
}

/// The confirmation after the user signed in to the account that holds the address.
public struct UpstreamLinkPage: Sendable {
    public var context: PageContext
    public var providerLabel: String
    public var email: String
    public var accountEmail: String

    public init(context: PageContext, providerLabel: String, email: String, accountEmail: String) {
        self.context = context
        self.providerLabel = providerLabel
        self.email = email
        self.accountEmail = accountEmail
    }
}

extension LoginPages {
    static func fill(_ text: String, _ values: [String: String]) -> String {
        values.reduce(text) { $0.replacingOccurrences(of: "{\($1.key)}", with: $1.value) }
    }

    public static func upstreamProveControl(_ page: UpstreamProveControlPage) -> String {
        let s = UpstreamStrings(page.context.language)
        let title = s[.proveTitle]
        return Layout(
            language: page.context.language, title: title, siteName: page.context.siteName, csrfToken: nil,
            script: nil, languageLinkBase: page.context.path
        ).render([
            H.el("h1", [:], [.text(title)]),
            H.p(
                ["class": "subtitle", "id": "prove-control"],
                [.text(fill(s[.proveLead], ["email": page.email, "provider": page.providerLabel]))]),
            H.el(
                "a", ["class": "button primary", "href": page.signInLink, "id": "prove-control-sign-in"],
                [.text(s[.proveButton])]),
        ])
    }

    public static func upstreamLink(_ page: UpstreamLinkPage) -> String {
        let s = UpstreamStrings(page.context.language)
        let values = ["provider": page.providerLabel, "email": page.email, "account": page.accountEmail]
        let title = fill(s[.linkTitle], values)
        return Layout(
            language: page.context.language, title: title, siteName: page.context.siteName,
            csrfToken: page.context.csrfToken, script: nil, languageLinkBase: page.context.path
        ).render([
            H.el("h1", [:], [.text(title)]),
            H.p(["class": "subtitle", "id": "link-lead"], [.text(fill(s[.linkLead], values))]),
            H.el(
                "form", ["method": "post", "action": "/upstream/link", "id": "link-form"],
                [
                    H.hidden("csrf_token", page.context.csrfToken),
                    H.el(
                        "button", ["type": "submit", "class": "primary", "id": "link-confirm"],
                        [.text(fill(s[.linkButton], values))]),
                ]),
        ])
    }

    static func upstreamSection(_ section: UpstreamAccountSection, context: PageContext) -> HTMLNode {
        let s = UpstreamStrings(context.language)
        let items: [HTMLNode] = section.identities.map { identity in
            H.el(
                "li", ["class": "item identity-item", "data-id": identity.id],
                [
                    H.div(
                        [:],
                        [
                            H.el("strong", ["class": "identity-provider"], [.text(identity.providerLabel)]),
                            identity.email.map { H.p(["class": "hint identity-email"], [.text($0)]) }
                                ?? .fragment([]),
                            H.p(
                                ["class": "hint"],
                                [
                                    .text(Strings(context.language)[.created] + " "),
                                    DateText.node(identity.linkedAt, context.language),
                                ]),
                        ]),
                    H.el(
                        "form",
                        ["method": "post", "action": "/account/identities/\(identity.id)/unlink"],
                        [
                            H.hidden("csrf_token", context.csrfToken),
                            H.el(
                                "button",
                                ["type": "submit", "class": "danger small", "id": "unlink-\(identity.id)"],
                                [.text(s[.unlink])]),
                        ]),
                ])
        }
        let links: [HTMLNode] = section.providers.map { provider in
            H.el(
                "form", ["method": "post", "action": "/upstream/\(provider.id)/link"],
                [
                    H.hidden("csrf_token", context.csrfToken),
                    H.el(
                        "button", ["type": "submit", "class": "secondary", "id": "link-\(provider.id)"],
                        [.text(fill(s[.linkAnother], ["provider": provider.label]))]),
                ])
        }
        return H.el(
            "section", ["aria-labelledby": "identities-heading", "id": "identities"],
            [
                H.el("h2", ["id": "identities-heading"], [.text(s[.identities])]),
                H.p(["class": "hint"], [.text(s[.identitiesIntro])]),
                section.notice.map {
                    H.p(["class": "status info", "id": "identities-notice", "role": "status"], [.text($0)])
                }
                    ?? .fragment([]),
                section.identities.isEmpty
                    ? H.p(["class": "empty", "id": "no-identities"], [.text(s[.noIdentities])])
                    : H.el("ul", ["class": "list identity-list", "id": "identity-list"], items),
            ] + links)
    }
}
