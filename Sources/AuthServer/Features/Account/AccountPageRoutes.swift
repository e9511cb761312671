import Crypto
import Foundation
import HTTPServer
import LoginPages

/// The account page (`GET /account`, where `/` leads): the account, its passkeys, its
/// sessions and the email verification prompt; a browser not signed in goes to `/signin` (or
/// to the account chooser while other accounts are signed in in it).
struct AccountPageRoutes: Sendable {
    let services: AccountServices

    func register(on router: Router) {
        let routes = self
        router.get("/") { _, _ in HTTPResponse.redirect(to: "/account") }
        router.get("/account") { request, _ in try routes.page(request) }
    }

    func page(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let session = try services.sessions.current(request),
            let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
        else {
            // No current account, but others still signed in here: the chooser.
            if !BrowserSessions(request, cookies: services.cookies).others.isEmpty {
                return Pages.noStore(.redirect(to: "/accounts"))
            }
            return Pages.noStore(.redirect(to: "/signin?return_to=%2Faccount"))
        }
        let passkeys = try PasskeyStore.list(accountID: account.id, on: services.pool)
        let sessions = try services.sessions.list(accountID: account.id)
        let canRemove = CredentialPolicy.mayRemovePassword(
            hasPassword: account.hasPassword, hasUsedPasskey: passkeys.contains { $0.lastUsedAt != nil },
            identities: try UpstreamIdentityStore.count(accountID: account.id, on: services.pool))
        let emailPrompt = try services.emailVerification.prompt(
            accountID: account.id, notice: request.queryValue("email"))
        let pendingEmail = try EmailChangeFlow(
            services: services, store: PostgresEmailChangeStore(db: services.pool)
        ).pendingAddress(accountID: account.id)
        return Pages.page(services, request) { context in
            var page = AccountPage(
                context: context, displayName: account.displayName, email: account.email,
                rpID: services.rpID, userID: Base64URL.encode(account.userHandle),
                hasPassword: account.hasPassword, canRemovePassword: canRemove,
                passkeys: passkeys.map(Self.row),
                sessions: sessions.map { Self.row($0, current: session.id) },
                emailVerification: emailPrompt, profile: Self.form(account.profile))
            page.upstream = AccountIdentitiesRoutes.section(
                services: services, accountID: account.id, notice: request.queryValue("identities"),
                language: context.language)
            page.emailChange = EmailChangePrompt(newEmail: pendingEmail)
            return LoginPages.account(page)
        }
    }

    private static func form(_ profile: ProfileFields) -> ProfileForm {
        ProfileForm(
            givenName: profile.givenName ?? "", familyName: profile.familyName ?? "",
            preferredUsername: profile.preferredUsername ?? "", locale: profile.locale ?? "",
            picture: profile.picture ?? "")
    }

    private static func row(_ passkey: PasskeyRecord) -> AccountPage.Passkey {
        AccountPage.Passkey(
            id: passkey.id.lowercased, credentialID: Base64URL.encode(passkey.credentialID),
            name: passkey.name,
            provider: PasskeyProviders.name(forAAGUID: passkey.aaguid), synced: passkey.backedUp,
            createdAt: passkey.createdAt, lastUsedAt: passkey.lastUsedAt)
    }

    private static func row(_ session: SessionSummary, current: UUID) -> AccountPage.Session {
        AccountPage.Session(
            id: session.id.lowercased, device: UserAgentSummary.describe(session.userAgent),
            createdAt: session.createdAt, lastSeenAt: session.lastSeenAt, isCurrent: session.id == current)
    }
}
