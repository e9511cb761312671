import Crypto
import Foundation
import HTTPServer
import LoginPages
import OIDC

/// `GET|POST /authorize` and `POST /authorize/consent` (RFC 6749 §4.1, OpenID Connect Core
/// §3.1.2): validate → find the browser session → sign-in or consent if needed → code.
///
/// A request that has to wait for the user keeps its parameters in the URL (sign-in comes
/// back through `return_to`) plus `resume`, the id of a row that remembers when the request
/// first arrived, so that `prompt=login` and `max_age` can tell a new sign-in from an old one.
struct AuthorizationEndpoint: Sendable {
    static let resumeParameter = "resume"
    let oauth: OAuthServices

    enum ConsentAnswer { case allow, deny }

    func register(on router: Router) {
        let endpoint = self
        router.get("/authorize") { request, _ in
            endpoint.handle(request) { () throws(HTTPError) in try request.decodedQuery() }
        }
        router.post("/authorize") { request, _ in
            endpoint.handle(request) { () throws(HTTPError) in try request.formItems() }
        }
        router.post("/authorize/consent") { request, _ in
            let items = (try? request.formItems()) ?? []
            let answer: ConsentAnswer? =
                switch items.first(where: { $0.name == "decision" })?.value {
                case "allow": .allow
                case "deny": .deny
                default: nil
                }
            do {
                try endpoint.oauth.accounts.csrf.verify(
                    request, submitted: items.first { $0.name == CSRFProtection.formField }?.value)
            } catch {
                return endpoint.oauth.errorPage(
                    request,
                    OAuthError(
                        .accessDenied, hint: "The consent form expired; start again from the application."))
            }
            guard let answer else {
                return endpoint.oauth.errorPage(
                    request, OAuthError(.invalidRequest, hint: "No consent decision was sent."))
            }
            let kept = items.filter { $0.name != "decision" && $0.name != CSRFProtection.formField }
            return endpoint.handle(request, consent: answer) { () throws(HTTPError) in kept }
        }
    }

    func handle(
        _ request: HTTPRequest, consent: ConsentAnswer? = nil,
        _ items: () throws(HTTPError) -> [(name: String, value: String)]
    ) -> HTTPResponse {
        do {
            return try authorize(request, items: try items(), consent: consent)
        } catch let error as HTTPError {
            return oauth.errorPage(
                request, OAuthError(.invalidRequest, hint: "The request is malformed.", debug: error.message))
        } catch {
            oauth.log.error("authorize.failed", ["reason": OAuthServices.describe(error)])
            return oauth.errorPage(request, OAuthServices.failure(error))
        }
    }

    func authorize(
        _ request: HTTPRequest, items allItems: [(name: String, value: String)], consent: ConsentAnswer?
    ) throws -> HTTPResponse {
        let resumeID = allItems.first { $0.name == Self.resumeParameter }.flatMap {
            UUID(uuidString: $0.value)
        }
        let items = allItems.filter { $0.name != Self.resumeParameter }
        let parameters = Parameters(items)

        // Steps 1–12 of the pure validation; client and redirect URI problems stay here.
        let validated: AuthorizationRequest
        do {
            let clientID = try AuthorizationRequest.clientID(in: parameters)
            validated = try AuthorizationRequest.validate(
                parameters, client: oauth.clients.client(clientID), issuer: oauth.issuer)
        } catch {
            return respond(failure: error, request: request)
        }
        let redirect = validated.redirect

        // The browser session and when this request first arrived.
        let sessions = oauth.accounts.sessions
        let lookup = try sessions.lookUp(
            token: request.cookies[sessions.cookies.sessionName], consentClientID: validated.client.clientID)
        let current = lookup.session
        let now = lookup.now
        let digest = Self.parametersDigest(items)
        var receivedAt = now
        var resumed = false
        if let resumeID,
            let stored = try OAuthStore.requestReceivedAt(
                id: resumeID, parametersDigest: digest, on: oauth.pool)
        {
            receivedAt = stored
            resumed = true
        }
        let session = current.map(OAuthServices.browserSession)
        var hasConsent = false
        var consentGiven = false
        if let current {
            hasConsent = lookup.consentedScopes.map { Set(validated.scopes).isSubset(of: Set($0)) } ?? false
            switch consent {
            case .deny?:
                return respond(
                    redirect.failure(OAuthError(.accessDenied, hint: "The user declined the request.")),
                    request: request, validated)
            case .allow?:
                try OAuthStore.grantConsent(
                    accountID: current.accountID, clientID: validated.client.clientID,
                    scopes: validated.scopes, on: oauth.pool)
                hasConsent = true
                consentGiven = true
            case nil: break
            }
        }
        let signedInDuringRequest = current.map { $0.authTime > receivedAt } ?? false
        let context = SessionContext(
            session: session, hasConsent: hasConsent, requestReceivedAt: receivedAt, now: now,
            accountSelected: signedInDuringRequest, consentGivenInThisRequest: consentGiven)

        switch SessionDecision.decide(for: validated, context: context) {
        case .proceed(let browserSession):
            guard let current else {
                return respond(
                    failure: AuthorizationFailure(
                        error: OAuthError(.serverError, hint: ""), redirect: redirect), request: request)
            }
            let code = oauth.tokens.next()
            let issued = IssuedAuthorizationCode(
                request: validated, session: browserSession,
                expiresAt: now.addingTimeInterval(Double(oauth.settings.authorizationCodeLifetimeSeconds)))
            // The code and the session's client list commit without waiting for the disk. If a
            // PostgreSQL crash loses them, the code was never redeemed: redeeming it commits
            // durably, and that flush covers every earlier WAL record, this one included. So a
            // client that holds tokens always has its client-list row (back-channel logout
            // depends on it), and a lost code only fails safe with invalid_grant.
            try OAuthStore.insertCode(
                code, issued: issued, accountID: current.accountID, sessionID: current.id,
                lifetimeSeconds: oauth.settings.authorizationCodeLifetimeSeconds,
                backchannelLogoutURI: validated.client.backchannelLogoutURI, on: oauth.pool)
            oauth.log.info(
                "authorize.code_issued",
                ["client_id": validated.client.clientID, "account": current.accountID.uuidString])
            return respond(redirect.success(code: code), request: request, validated)

        case .login(let reason):
            let resume = try rememberedRequest(resumed ? resumeID : nil, digest: digest)
            let returnTo = Self.resumeURL(items: items, resume: resume)
            var target = reason == .promptCreate ? "/signup" : "/signin"
            var query: [(String, String)] = [("return_to", returnTo)]
            if current != nil { query.append(("prompt", "login")) }
            if let hint = validated.loginHint { query.append(("login_hint", hint)) }
            if !validated.uiLocales.isEmpty {
                query.append(("ui_locales", validated.uiLocales.joined(separator: " ")))
            }
            target += "?" + FormEncoding.encode(query.map { (name: $0.0, value: $0.1) })
            return OAuthServices.noStore(.redirect(to: target))

        case .selectAccount:
            // One account per browser: choosing an account means signing in again.
            let resume = try rememberedRequest(resumed ? resumeID : nil, digest: digest)
            let target =
                "/signin?"
                + FormEncoding.encode([
                    (name: "return_to", value: Self.resumeURL(items: items, resume: resume)),
                    (name: "prompt", value: "login"),
                ])
            return OAuthServices.noStore(.redirect(to: target))

        case .consent:
            let resume = try rememberedRequest(resumed ? resumeID : nil, digest: digest)
            let (pageContext, cookie) = oauth.pageContext(request, uiLocales: validated.uiLocales)
            let email =
                try current.flatMap { try AccountStore.summary(accountID: $0.accountID, on: oauth.pool) }?
                .email ?? ""
            let switchAccount =
                "/signin?"
                + FormEncoding.encode([
                    (name: "prompt", value: "login"),
                    (name: "return_to", value: Self.resumeURL(items: items, resume: resume)),
                ])
            let html = LoginPages.consent(
                ConsentPage(
                    context: pageContext, clientName: oauth.clientName(validated.client.clientID),
                    scopes: validated.scopes,
                    accountEmail: email, action: "/authorize/consent",
                    hiddenFields: items + [
                        (name: Self.resumeParameter, value: resume.uuidString.lowercased())
                    ],
                    switchAccountLink: switchAccount))
            return OAuthServices.page(html, cookie: cookie)

        case .error(let error):
            return respond(redirect.failure(error), request: request, validated)
        }
    }

    private func rememberedRequest(_ existing: UUID?, digest: [UInt8]) throws -> UUID {
        if let existing { return existing }
        return try OAuthStore.rememberRequest(parametersDigest: digest, on: oauth.pool)
    }

    /// `/authorize?<the request's own parameters>&resume=<id>`.
    static func resumeURL(items: [(name: String, value: String)], resume: UUID) -> String {
        "/authorize?"
            + FormEncoding.encode(items + [(name: resumeParameter, value: resume.uuidString.lowercased())])
    }

    static func parametersDigest(_ items: [(name: String, value: String)]) -> [UInt8] {
        SHA256.hash(data: Array(FormEncoding.encode(items).utf8)).bytes
    }

    private func respond(failure: any Error, request: HTTPRequest) -> HTTPResponse {
        guard let failure = failure as? AuthorizationFailure else {
            return oauth.errorPage(request, OAuthError(.serverError, hint: ""))
        }
        guard let response = failure.response else { return oauth.errorPage(request, failure.error) }
        oauth.log.info("authorize.refused", ["error": failure.error.error, "hint": failure.error.hint])
        return render(response, request: request, uiLocales: [])
    }

    private func respond(
        _ response: AuthorizationResponse, request: HTTPRequest, _ validated: AuthorizationRequest
    ) -> HTTPResponse {
        render(response, request: request, uiLocales: validated.uiLocales)
    }

    /// A redirect, or for `form_post` a page that posts the fields to the client. That page
    /// may submit a form to the client's origin, which the default policy forbids.
    private func render(_ response: AuthorizationResponse, request: HTTPRequest, uiLocales: [String])
        -> HTTPResponse
    {
        switch response {
        case .redirect(let location):
            return OAuthServices.noStore(.redirect(to: location))
        case .formPost(let action, let fields):
            let (context, _) = oauth.pageContext(request, uiLocales: uiLocales)
            var page = OAuthServices.page(
                LoginPages.formPost(FormPostPage(context: context, action: action, fields: fields)))
            page.headers.set(
                "Content-Security-Policy",
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action \(Self.origin(of: action)); frame-ancestors 'none'; base-uri 'none'"
            )
            return page
        }
    }

    /// `scheme://host[:port]` of a validated redirect URI, for the form-post page's policy.
    static func origin(of uri: String) -> String {
        guard let components = URLComponents(string: uri), let scheme = components.scheme,
            let host = components.host
        else {
            return "'none'"
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return components.port.map { "\(scheme)://\(hostPart):\($0)" } ?? "\(scheme)://\(hostPart)"
    }
}

extension OAuthServices {
    static func noStore(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
