import Crypto
import Foundation
import LoginPages
import OIDC

/// The authorization endpoint (RFC 6749 §4.1, OpenID Connect Core §3.1.2): validate → find
/// the browser session → when it arrived → consent answer → decide → code, or the page the
/// user must see first.
///
/// A request that has to wait for the user keeps its parameters in the URL plus `resume`
/// (see `AuthorizationInteraction`), the id of a row that remembers when it first arrived.
struct AuthorizeFlow: Sendable {
    let oauth: OAuthServices
    let store: any AuthorizeStore

    /// The consent page's answer.
    enum ConsentAnswer: String, Sendable { case allow, deny }

    typealias Items = [(name: String, value: String)]

    /// What the browser is shown next when the request succeeds or waits for the user.
    enum Outcome {
        /// The code, to the client's redirect URI (a redirect or a `form_post` page).
        case code(AuthorizationResponse, uiLocales: [String])
        /// The sign-in or sign-up page, which comes back here afterwards.
        case signIn(location: String)
        /// The consent page.
        case consent(ConsentPrompt)
    }

    /// What the consent page shows and posts back.
    struct ConsentPrompt {
        var clientName: String
        var scopes: [String]
        var accountEmail: String
        /// The request's own parameters and `resume`, posted back with the answer.
        var hiddenFields: Items
        var switchAccountLink: String
        var uiLocales: [String]
        /// The descriptions of the requested API scopes.
        var apiScopes: [String: ConsentPage.APIScopeText] = [:]
    }

    /// Answers one authorization request (`items`: its query or form parameters, `resume`
    /// included). `consent` is the consent page's answer when the request comes back from it.
    /// - Throws: `BrowserOAuthError` for a refusal (redirected to the client when the client
    ///   and redirect URI are trusted, else an error page); database errors as they are.
    func authorize(_ allItems: Items, sessionToken: String?, consent: ConsentAnswer? = nil) throws -> Outcome
    {
        // `resume` names the remembered request; it is not one of the request's parameters.
        let resumeID = allItems.first { $0.name == AuthorizationInteraction.resumeParameter }.flatMap {
            UUID(uuidString: $0.value)
        }
        let items = allItems.filter { $0.name != AuthorizationInteraction.resumeParameter }

        // Validate: client, redirect URI, then the rest (pure, `AuthorizationRequest`).
        let request = try validate(items)

        // The browser session, the database's time and the stored consent: one round trip.
        let lookup = try store.lookUp(sessionToken: sessionToken, clientID: request.client.clientID)
        let current = lookup.session
        let now = lookup.now

        // When the request first arrived: when the remembered request did, else now.
        let digest = Self.parametersDigest(items)
        let rememberedAt = try resumeID.flatMap {
            try store.requestReceivedAt(id: $0, parametersDigest: digest)
        }
        let receivedAt = rememberedAt ?? now
        let remembered = rememberedAt == nil ? nil : resumeID

        // The consent page's answer counts only for a signed-in user.
        var hasConsent = false
        var consentGiven = false
        if let current {
            hasConsent = SessionContext.consentCovers(
                request.consentScopes, consented: lookup.consentedScopes)
            switch consent {
            case .deny?:
                throw BrowserOAuthError.toClient(
                    request.redirect.failure(
                        OAuthError(.accessDenied, hint: "The user declined the request.")),
                    uiLocales: request.uiLocales)
            case .allow?:
                try store.grantConsent(
                    accountID: current.accountID, clientID: request.client.clientID,
                    scopes: request.consentScopes)
                hasConsent = true
                consentGiven = true
            case nil: break
            }
        }

        // Decide (pure, `SessionDecision`): code, sign-in, account choice, consent or error.
        let context = SessionContext(
            session: current.map(OAuthServices.browserSession), hasConsent: hasConsent,
            requestReceivedAt: receivedAt, now: now,
            accountSelected: current.map { $0.authTime > receivedAt } ?? false,
            consentGivenInThisRequest: consentGiven)
        switch SessionDecision.decide(for: request, context: context) {
        case .proceed(let session):
            guard let current else {
                throw refused(
                    AuthorizationFailure(
                        error: OAuthError(.serverError, hint: ""), redirect: request.redirect))
            }
            return try issueCode(request, session: session, current: current, now: now)

        case .login(let reason):
            let returnTo = try resumeURL(items, remembered: remembered, digest: digest)
            return .signIn(
                location: AuthorizationInteraction.login(
                    reason, request: request, signedIn: current != nil, returnTo: returnTo))

        case .selectAccount:
            let returnTo = try resumeURL(items, remembered: remembered, digest: digest)
            return .signIn(location: AuthorizationInteraction.selectAccount(returnTo: returnTo))

        case .consent:
            let resume = try remember(remembered, digest: digest)
            return .consent(
                try consentPrompt(request, items: items, resume: resume, accountID: current?.accountID))

        case .error(let error):
            throw BrowserOAuthError.toClient(request.redirect.failure(error), uiLocales: request.uiLocales)
        }
    }

    private func validate(_ items: Items) throws(BrowserOAuthError) -> AuthorizationRequest {
        do throws(AuthorizationFailure) {
            let parameters = Parameters(items)
            let clientID = try AuthorizationRequest.clientID(in: parameters)
            // The keys only when there is an `id_token_hint` to verify; without them the hint
            // is refused.
            let hinted = items.contains { $0.name == "id_token_hint" }
            return try AuthorizationRequest.validate(
                parameters, client: oauth.clients.client(clientID), issuer: oauth.issuer,
                verifier: hinted ? try? oauth.verifier() : nil, resources: oauth.resources)
        } catch {
            throw refused(error)
        }
    }

    /// The consent page for the signed-in account; its form posts the request back with `resume`.
    private func consentPrompt(_ request: AuthorizationRequest, items: Items, resume: UUID, accountID: UUID?)
        throws -> ConsentPrompt
    {
        let email = try accountID.flatMap { try store.accountEmail($0) } ?? ""
        var apiScopes: [String: ConsentPage.APIScopeText] = [:]
        let catalog = oauth.resources
        for name in request.scopes {
            guard let api = catalog.resource(owning: name),
                let scope = api.scopes.first(where: { $0.name == name })
            else { continue }
            apiScopes[name] = .init(
                apiName: api.name, english: scope.description, japanese: scope.descriptionJa)
        }
        var prompt = ConsentPrompt(
            clientName: oauth.clientName(request.client.clientID), scopes: request.consentScopes,
            accountEmail: email,
            hiddenFields: items + [
                (name: AuthorizationInteraction.resumeParameter, value: resume.lowercased)
            ],
            switchAccountLink: AuthorizationInteraction.switchAccount(
                returnTo: AuthorizationInteraction.resumeURL(items: items, resume: resume.lowercased)),
            uiLocales: request.uiLocales)
        prompt.apiScopes = apiScopes
        return prompt
    }

    /// Stores the code with the session's client-list row (for logout) and answers the client.
    private func issueCode(
        _ request: AuthorizationRequest, session: BrowserSession, current: CurrentSession, now: Date
    ) throws -> Outcome {
        let lifetime = oauth.settings.authorizationCodeLifetimeSeconds
        let code = oauth.tokens.next()
        let issued = IssuedAuthorizationCode(
            request: request, session: session, expiresAt: now.addingTimeInterval(Double(lifetime)))
        try store.insertCode(
            NewAuthorizationCode(
                id: oauth.system.uuid(), code: code, issued: issued, accountID: current.accountID,
                sessionID: current.id, lifetimeSeconds: lifetime,
                backchannelLogoutURI: request.client.backchannelLogoutURI,
                userinfoClaims: request.userinfoClaims))
        oauth.log.info(
            "authorize.code_issued",
            ["client_id": request.client.clientID, "account": current.accountID.uuidString])
        return .code(request.redirect.success(code: code), uiLocales: request.uiLocales)
    }

    /// A refused request: redirected to the client (logged) when the client and redirect URI
    /// are trusted, else an error page.
    private func refused(_ failure: AuthorizationFailure) -> BrowserOAuthError {
        guard let response = failure.response else { return .page(failure.error) }
        oauth.log.info("authorize.refused", ["error": failure.error.error, "hint": failure.error.hint])
        return .toClient(response, uiLocales: [])
    }

    /// The id of the remembered request: the one the browser came back with, or a new one.
    private func remember(_ remembered: UUID?, digest: [UInt8]) throws -> UUID {
        if let remembered { return remembered }
        let id = oauth.system.uuid()
        try store.rememberRequest(id: id, parametersDigest: digest)
        return id
    }

    private func resumeURL(_ items: Items, remembered: UUID?, digest: [UInt8]) throws -> String {
        let resume = try remember(remembered, digest: digest)
        return AuthorizationInteraction.resumeURL(items: items, resume: resume.lowercased)
    }

    /// Identifies the request's parameters, so `resume` cannot carry one request's arrival
    /// time over to another.
    static func parametersDigest(_ items: Items) -> [UInt8] {
        SHA256.hash(data: Array(FormEncoding.encode(items).utf8)).bytes
    }
}
