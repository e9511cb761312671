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
        /// The account chooser.
        case chooseAccount(ChooserPrompt)
    }

    /// What the account chooser shows and posts back (to `/authorize/select`).
    struct ChooserPrompt {
        var clientName: String
        /// The browser's live accounts, the current one first.
        var accounts: [BrowserAccount]
        /// The account `login_hint` names, when it is signed in here.
        var suggested: UUID?
        /// The request's own parameters and `resume`.
        var hiddenFields: Items
        var useAnotherAccountLink: String
        /// Back here after signing out of an account.
        var returnTo: String
        var uiLocales: [String]
    }

    /// The hidden field by which the consent page says that the account was chosen in the
    /// chooser for this request (honoured only from the CSRF-checked consent form).
    static let accountSelectedField = "account_selected"

    /// The buttons of the consent page and of the chooser: the user's answer. A request's own
    /// parameters of these names never travel into the pages' forms, where they would stand
    /// ahead of the button pressed and answer for the user.
    static let decisionField = "decision"
    static let chosenSessionField = "session_id"

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
    /// `otherTokens` are the browser's other accounts (the accounts cookie); `selected` is the
    /// session the user just chose in the chooser (or confirmed on the consent page after
    /// choosing it), for this request.
    /// `pushedBinding` is the browser's binding cookie for pushed requests (see
    /// `PushedAuthorizationRequest`); nil when it has none.
    func authorize(
        _ allItems: Items, sessionToken: String?, otherTokens: [String] = [], selected: UUID? = nil,
        consent: ConsentAnswer? = nil, pushedBinding: String? = nil
    ) throws -> Outcome {
        // `resume` names the remembered request; it is not one of the request's parameters;
        // neither are the consent page's note of a chosen account and the pages' buttons.
        let resumeID = allItems.first { $0.name == AuthorizationInteraction.resumeParameter }.flatMap {
            UUID(uuidString: $0.value)
        }
        let notParameters: Set = [
            AuthorizationInteraction.resumeParameter, Self.accountSelectedField, Self.decisionField,
            Self.chosenSessionField, CSRFProtection.formField,
        ]
        let items = allItems.filter { !notParameters.contains($0.name) }

        // A pushed request (RFC 9126 §4): its stored parameters replace the browser's, which
        // carry only `client_id` and `request_uri` (and travel through the pages as they are).
        // A signed request object (RFC 9101 §6.3): its parameters replace the browser's; it is
        // verified again on every pass, and its `jti` is used up with the code.
        let pushed = try resolvePushed(items, binding: pushedBinding)
        let object = pushed == nil ? try resolveRequestObject(items) : nil

        // Validate: client, redirect URI, then the rest (pure, `AuthorizationRequest`).
        let request = try validate(
            pushed?.items ?? object?.parameters.items ?? items, pushed: pushed != nil,
            signed: object != nil || pushed?.requestObjectSigned == true)
        var once = OneTimeRequest(pushedReferenceDigest: pushed?.referenceDigest)
        if let object, let jti = object.jwtID {
            once.requestObjectID = (request.client.clientID, jti, object.expiresAt)
        }

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

        // The other accounts of this browser: who they are, and whether the request names one.
        let browser = BrowserSessions(current: sessionToken, others: otherTokens)
        let accounts = otherTokens.isEmpty ? [] : try store.browserAccounts(browser)
        let others = accounts.filter { $0.sessionID != current?.id }
        let chosen = selected != nil && selected == current?.id
        let suggested = Self.suggested(
            request, current: accounts.first { $0.sessionID == current?.id }, others)

        // Decide (pure, `SessionDecision`): code, sign-in, account choice, consent or error.
        var context = SessionContext(
            session: current.map(OAuthServices.browserSession), hasConsent: hasConsent,
            requestReceivedAt: receivedAt, now: now,
            accountSelected: chosen || (current.map { $0.authTime > receivedAt } ?? false),
            consentGivenInThisRequest: consentGiven,
            accountSelectionNeeded: (current == nil && !others.isEmpty) || suggested != nil)
        context.otherSignedInSubjects = Set(others.map(\.accountID.lowercased))
        switch SessionDecision.decide(for: request, context: context) {
        case .proceed(let session):
            guard let current else {
                throw refused(
                    AuthorizationFailure(
                        error: OAuthError(.serverError, hint: ""), redirect: request.redirect))
            }
            return try issueCode(request, session: session, current: current, now: now, once: once)

        case .login(let reason):
            let returnTo = try resumeURL(items, remembered: remembered, digest: digest)
            return .signIn(
                location: AuthorizationInteraction.login(
                    reason, request: request, signedIn: current != nil, returnTo: returnTo))

        case .selectAccount:
            let resume = try remember(remembered, digest: digest)
            let returnTo = AuthorizationInteraction.resumeURL(items: items, resume: resume.lowercased)
            // The chooser lists the current account too; with no account live it is the sign-in page.
            let listed = accounts.isEmpty ? (try store.browserAccounts(browser)) : accounts
            if listed.isEmpty {
                return .signIn(
                    location: AuthorizationInteraction.login(
                        .noSession, request: request, signedIn: false, returnTo: returnTo))
            }
            return .chooseAccount(
                ChooserPrompt(
                    clientName: oauth.clientName(request.client.clientID), accounts: listed,
                    suggested: suggested,
                    hiddenFields: items + [
                        (name: AuthorizationInteraction.resumeParameter, value: resume.lowercased)
                    ],
                    useAnotherAccountLink: AuthorizationInteraction.login(
                        .promptLogin, request: request, signedIn: true, returnTo: returnTo),
                    returnTo: returnTo, uiLocales: request.uiLocales))

        case .consent:
            let resume = try remember(remembered, digest: digest)
            var prompt = try consentPrompt(
                request, items: items, resume: resume, accountID: current?.accountID)
            if chosen, let current {
                prompt.hiddenFields.append((name: Self.accountSelectedField, value: current.id.lowercased))
            }
            // "Not you?" with other accounts signed in here: the chooser, then back to this request.
            if !others.isEmpty {
                let returnTo = AuthorizationInteraction.resumeURL(items: items, resume: resume.lowercased)
                prompt.switchAccountLink =
                    "/accounts?" + FormEncoding.encode([(name: "return_to", value: returnTo)])
            }
            return .consent(prompt)

        case .error(let error):
            throw BrowserOAuthError.toClient(request.redirect.failure(error), uiLocales: request.uiLocales)
        }
    }

    /// The signed-in account `login_hint` names when it is not the current one (Core
    /// §3.1.2.1): the chooser offers it first. A hint naming no account of this browser is
    /// only passed on to the sign-in page, should the user need it.
    static func suggested(
        _ request: AuthorizationRequest, current: BrowserAccount?, _ others: [BrowserAccount]
    )
        -> UUID?
    {
        guard let hint = request.loginHint, !hint.isEmpty else { return nil }
        if current?.matches(hint: hint) == true { return nil }
        return others.first { $0.matches(hint: hint) }?.sessionID
    }

    private func validate(_ items: Items, pushed: Bool, signed: Bool) throws(BrowserOAuthError)
        -> AuthorizationRequest
    {
        do throws(AuthorizationFailure) {
            let parameters = Parameters(items)
            let clientID = try AuthorizationRequest.clientID(in: parameters)
            // The keys only when there is an `id_token_hint` to verify; without them the hint
            // is refused.
            let hinted = items.contains { $0.name == "id_token_hint" }
            return try AuthorizationRequest.validate(
                parameters, client: oauth.clients.client(clientID), issuer: oauth.issuer,
                verifier: hinted ? try? oauth.verifier() : nil, resources: oauth.resources, pushed: pushed,
                pushedRequired: oauth.settings.requirePushedAuthorizationRequests, signed: signed)
        } catch {
            throw refused(error)
        }
    }

    /// A pushed request named by the browser's `request_uri`.
    struct PushedRequest {
        /// The parameters the client pushed (they include `client_id`).
        var items: Items
        var referenceDigest: [UInt8]
        var requestObjectSigned: Bool
    }

    /// The signed request object in the browser's `request` (RFC 9101 §5.1), verified with the
    /// client's keys; nil without one, or for an unsigned one (refused by `validate` as
    /// `request_not_supported`) or an unknown client (refused by `validate`).
    /// - Throws: `invalid_request_object`, to the browser's registered redirect URI (the
    ///   object's own cannot be trusted) or an error page.
    private func resolveRequestObject(_ items: Items) throws -> RequestObject.Verified? {
        let outer = Parameters(items)
        guard let object = try? outer.value("request"), RequestObject.isSigned(object),
            let clientID = try? AuthorizationRequest.clientID(in: outer),
            let client = oauth.clients.client(clientID)
        else { return nil }
        do throws(OAuthError) {
            return try RequestObjects(oauth: oauth).verify(object, client: client)
        } catch {
            throw refused(
                AuthorizationRequest.failure(error, parameters: outer, client: client, issuer: oauth.issuer))
        }
    }

    /// The pushed request the browser's `request_uri` names (RFC 9126 §4), when it is one of
    /// ours; nil for a request without one (or an unknown client, refused by `validate`).
    /// Every parameter but `client_id` (which must name the pushing client) is ignored.
    /// - Throws: `invalid_request_uri` for an unknown, expired, used or another client's
    ///   request URI, or one another browser started using: to the pushed (or else the browser's) registered redirect URI, or an
    ///   error page when none is trusted.
    private func resolvePushed(_ items: Items, binding: String?) throws -> PushedRequest? {
        let outer = Parameters(items)
        guard let uri = try? outer.value("request_uri"),
            let reference = PushedAuthorizationRequest.reference(in: uri),
            let clientID = try? AuthorizationRequest.clientID(in: outer),
            let client = oauth.clients.client(clientID)
        else { return nil }
        let digest = OAuthStore.digest(reference)
        let refusal = OAuthError(
            .invalidRequestURI, hint: "Start again from the application.", debug: "request_uri unusable")
        guard
            let found = try store.pushedRequest(
                referenceDigest: digest, clientID: clientID,
                interactionSeconds: PushedAuthorizationRequest.interactionSeconds,
                // Without a cookie, a value no row can hold: such a browser may use only a
                // request not bound yet (and is given the cookie, see `AuthorizeRoutes`).
                browserDigest: OAuthStore.digest(binding ?? oauth.tokens.next())),
            let stored = try? Parameters(formEncoded: found.parameters)
        else {
            throw refused(
                AuthorizationRequest.failure(refusal, parameters: outer, client: client, issuer: oauth.issuer)
            )
        }
        guard found.live, found.sameBrowser else {
            throw refused(
                AuthorizationRequest.failure(
                    refusal, parameters: stored, client: client, issuer: oauth.issuer))
        }
        return PushedRequest(
            items: stored.items, referenceDigest: digest, requestObjectSigned: found.requestObjectSigned)
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
    /// A pushed request and a request object's `jti` (`once`) are used up with the code, so
    /// they yield one code only (RFC 9126 §4, RFC 9101 §10.1).
    private func issueCode(
        _ request: AuthorizationRequest, session: BrowserSession, current: CurrentSession, now: Date,
        once: OneTimeRequest
    ) throws -> Outcome {
        let lifetime = FAPI2Profile.codeLifetime(
            configured: oauth.settings.authorizationCodeLifetimeSeconds, for: request.client)
        let code = oauth.system.timeOrderedToken()
        let issued = IssuedAuthorizationCode(
            request: request, session: session, expiresAt: now.addingTimeInterval(Double(lifetime)))
        let new = NewAuthorizationCode(
            id: oauth.system.timeOrderedUUID(), code: code, issued: issued, accountID: current.accountID,
            sessionID: current.id, lifetimeSeconds: lifetime,
            backchannelLogoutURI: request.client.backchannelLogoutURI,
            userinfoClaims: request.userinfoClaims)
        if !once.isEmpty {
            guard try store.insertCode(new, consuming: once) else {
                let error =
                    once.pushedReferenceDigest != nil
                    ? OAuthError(.invalidRequestURI, hint: "Start again from the application.")
                    : OAuthError(.invalidRequestObject, hint: "The request object was already used.")
                throw BrowserOAuthError.toClient(
                    request.redirect.failure(error), uiLocales: request.uiLocales)
            }
        } else {
            try store.insertCode(new)
        }
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
        let id = oauth.system.timeOrderedUUID()
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
