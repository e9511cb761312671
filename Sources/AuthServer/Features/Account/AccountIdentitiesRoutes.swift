import Foundation
import HTTPServer
import LoginPages

/// The linked identities of the signed-in account: `GET /api/account/identities`,
/// `DELETE /api/account/identities/<id>` (JSON, see docs/api.md), and the plain form of
/// /account, `POST /account/identities/<id>/unlink`.
struct AccountIdentitiesRoutes: Sendable {
    let oauth: OAuthServices

    var services: AccountServices { oauth.accounts }
    private var flow: AccountIdentitiesFlow { AccountIdentitiesFlow(services: services) }

    struct IdentityJSON: Encodable {
        var id: String
        var provider: String
        var providerLabel: String
        var email: String?
        var emailVerified: Bool
        var isPrivateEmail: Bool
        var createdAt: String
        var lastUsedAt: String?

        enum CodingKeys: String, CodingKey {
            case id, provider, email
            case providerLabel = "provider_label"
            case emailVerified = "email_verified"
            case isPrivateEmail = "is_private_email"
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
        }
    }

    struct IdentityList: Encodable { var identities: [IdentityJSON] }

    func register(on router: Router) {
        let routes = self
        let api = JSONAPI(router: router, services: services)
        api.add(.get, "/api/account/identities", step: "identities.list") { request, _ in
            let session = try routes.services.requireSession(request)
            return try JSONAPI.json(
                IdentityList(identities: try routes.flow.list(session: session).map(routes.json)))
        }
        api.add(.delete, "/api/account/identities/:id", step: "identities.unlink") { request, context in
            let session = try routes.services.requireRecentSession(request)
            try routes.flow.unlink(
                session: session, id: try JSONAPI.uuid(context.pathParameters["id"]), request: request)
            return HTTPResponse(status: .noContent)
        }
        router.post("/account/identities/:id/unlink") { request, context in
            routes.unlinkForm(request, id: context.pathParameters["id"])
        }
    }

    func json(_ identity: UpstreamIdentity) -> IdentityJSON {
        IdentityJSON(
            id: identity.id.lowercased, provider: identity.provider,
            providerLabel: oauth.configuration.upstreamProvider(id: identity.provider)?.label
                ?? identity.provider,
            email: identity.email, emailVerified: identity.emailVerified,
            isPrivateEmail: identity.isPrivateEmail,
            createdAt: iso8601(identity.createdAt), lastUsedAt: identity.lastUsedAt.map(iso8601))
    }

    /// The form of /account: back to the page with the outcome (`identities=unlinked`,
    /// `identities=last`), or to a fresh sign-in when the last one is not recent.
    func unlinkForm(_ request: HTTPRequest, id: String?) -> HTTPResponse {
        let form = Pages.form(request)
        guard (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil
        else {
            return Pages.noStore(HTTPResponse(status: .forbidden))
        }
        guard let session = try? services.requireRecentSession(request) else {
            return Pages.noStore(.redirect(to: "/signin?prompt=login&return_to=%2Faccount"))
        }
        guard let id = id.flatMap(UUID.init(uuidString:)) else {
            return Pages.noStore(.redirect(to: "/account"))
        }
        do {
            try services.guarded("identities.unlink") {
                try flow.unlink(session: session, id: id, request: request)
            }
            return Pages.noStore(.redirect(to: "/account?identities=unlinked#identities"))
        } catch  where error.code == "last_credential" {
            return Pages.noStore(.redirect(to: "/account?identities=last#identities"))
        } catch {
            return Pages.noStore(.redirect(to: "/account"))
        }
    }

    /// The section of /account (nil: no upstream provider is configured and none is linked).
    static func section(
        services: AccountServices, accountID: UUID, notice: String?, language: PageLanguage
    ) -> UpstreamAccountSection? {
        let configuration = services.configuration
        let identities = (try? UpstreamIdentityStore.list(accountID: accountID, on: services.pool)) ?? []
        let providers = UpstreamSignInFlow.buttonProviders(configuration)
        if identities.isEmpty && providers.isEmpty { return nil }
        let s = UpstreamStrings(language)
        let message: String? =
            switch notice {
            case "unlinked": s[.unlinked]
            case "last": s[.lastWayIn]
            default: nil
            }
        return UpstreamAccountSection(
            identities: identities.map {
                UpstreamAccountSection.Identity(
                    id: $0.id.lowercased,
                    providerLabel: configuration.upstreamProvider(id: $0.provider)?.label ?? $0.provider,
                    email: $0.email, linkedAt: $0.createdAt)
            },
            providers: providers.map { UpstreamAccountSection.Provider(id: $0.id, label: $0.label) },
            notice: message)
    }
}
