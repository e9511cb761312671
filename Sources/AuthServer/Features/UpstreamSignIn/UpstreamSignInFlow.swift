import Crypto
import Foundation
import HTTPServer
import LoginPages
import OIDC

/// Signing in through an upstream OpenID provider (Sign in with Apple, or any OpenID Connect
/// provider), and linking such an identity to an account.
///
/// `start` sends the browser to the provider with `state`, `nonce` and PKCE S256; only the
/// state's digest is stored, with the provider, the purpose, where to continue, and the
/// digest of a cookie that binds the request to this browser. `finish` takes the provider's
/// answer once, exchanges the code, verifies the ID token and applies the linking rule
/// (`UpstreamAccounts.decide`).
struct UpstreamSignInFlow {
    let oauth: OAuthServices
    let store: any UpstreamSignInStore

    init(oauth: OAuthServices, store: (any UpstreamSignInStore)? = nil) {
        self.oauth = oauth
        self.store = store ?? PostgresUpstreamSignInStore(db: oauth.pool)
    }

    var services: AccountServices { oauth.accounts }
    var system: TimeAndRandomness { oauth.system }
    /// How long the provider has to answer, and the user to prove control of an account.
    static let requestLifetime: TimeInterval = 600
    static let pendingLinkLifetime: TimeInterval = 900
    /// RFC 8176 registers no value for a sign-in through another identity provider: `fed`
    /// (federated) names it. It is neither a passkey nor a second factor, so it never
    /// satisfies a passkey step-up or an `mfa` requirement.
    static let amr = ["fed"]

    enum Refusal: Error, Equatable {
        case unknownProvider
        case unavailable
        case expired
        case otherBrowser
        case cancelled
        case failed(String)
        case disabled
        case alreadyLinkedElsewhere
        case notSignedIn

        var message: UpstreamStrings.Key {
            switch self {
            case .unknownProvider, .unavailable, .failed: .failed
            case .expired: .expired
            case .otherBrowser: .otherBrowser
            case .cancelled: .cancelled
            case .disabled: .disabled
            case .alreadyLinkedElsewhere: .alreadyLinkedElsewhere
            case .notSignedIn: .reauthenticateToLink
            }
        }

        var status: HTTPStatus {
            switch self {
            case .unknownProvider: .notFound
            case .unavailable: HTTPStatus(code: 502)
            case .disabled, .alreadyLinkedElsewhere, .notSignedIn, .otherBrowser: .forbidden
            default: .badRequest
            }
        }
    }

    // MARK: - Start

    struct Started {
        var location: String
        /// The binding cookie's value (set when the browser had none).
        var binding: String
    }

    /// The providers that show a button: Apple only with a Services ID (its web client id).
    static func buttonProviders(_ configuration: Configuration) -> [UpstreamProvider] {
        configuration.upstreamProviders.filter { provider in
            if let apple = provider.apple { return apple.servicesID != nil }
            return true
        }
    }

    func redirectURI(_ provider: UpstreamProvider) -> String {
        var base = oauth.configuration.issuer
        if base.hasSuffix("/") { base.removeLast() }
        return base + "/upstream/\(provider.id)/callback"
    }

    func start(
        providerID: String, purpose: UpstreamRequestRecord.Purpose, accountID: UUID?, returnTo: String,
        uiLocales: String?, binding existing: String?
    ) throws(Refusal) -> Started {
        // Step 1. A configured provider with a web client id.
        guard let provider = oauth.configuration.upstreamProvider(id: providerID),
            Self.buttonProviders(oauth.configuration).contains(where: { $0.id == providerID })
        else { throw .unknownProvider }
        // Step 2. Its authorization endpoint: Apple's configured one, else discovery's.
        let endpoint: String
        let clientID: String
        let scope: String
        var responseMode: String?
        var claims: String?
        switch provider.kind {
        case .apple(let settings):
            endpoint = settings.endpoints.authorize
            clientID = settings.servicesID ?? ""
            // Apple sends the name and address only when asked, and then with form_post.
            scope = "name email"
            responseMode = "form_post"
        case .oidc(let settings):
            do {
                endpoint = try UpstreamDiscovery.shared.endpoints(
                    issuer: provider.issuer, fetch: provider.fetch
                )
                .authorization
            } catch {
                oauth.log.warning(
                    "upstream.start",
                    ["step": "discovery", "provider": provider.id, "reason": String(describing: error)])
                throw .unavailable
            }
            clientID = settings.clientID
            scope = settings.scopes.joined(separator: " ")
            claims = #"{"id_token":{"email":null,"email_verified":null,"name":null}}"#
        }
        // Step 3. State, and the secrets derived from it; the browser's binding.
        let state = UpstreamRequestSecrets.state(randomBytes: system.randomBytes(32))
        let secrets = UpstreamRequestSecrets(key: oauth.signingKeys.upstreamStateKey)
        let binding =
            existing.flatMap { UpstreamRequestSecrets.isWellFormed(state: $0) ? $0 : nil }
            ?? Base64URL.encode(system.randomBytes(32))
        guard
            let location = UpstreamAuthorizationURL(
                endpoint: endpoint, clientID: clientID, redirectURI: redirectURI(provider), scope: scope,
                state: state, nonce: secrets.nonce(forState: state),
                codeChallenge: UpstreamRequestSecrets.codeChallenge(
                    verifier: secrets.codeVerifier(forState: state)),
                responseMode: responseMode, claims: claims
            ).string
        else { throw .unavailable }
        // Step 4. Stored as digests, good for one answer.
        do {
            try store.insertRequest(
                stateDigest: UpstreamRequestSecrets.digest(state),
                UpstreamRequestRecord(
                    provider: provider.id, purpose: purpose, accountID: accountID, returnTo: returnTo,
                    uiLocales: uiLocales, bindingDigest: UpstreamRequestSecrets.digest(binding),
                    expiresAt: system.now().addingTimeInterval(Self.requestLifetime)))
        } catch {
            oauth.log.error(
                "upstream.start", ["step": "store", "reason": String(describing: type(of: error))])
            throw .unavailable
        }
        oauth.log.info("upstream.start", ["provider": provider.id, "purpose": purpose.rawValue])
        return Started(location: location, binding: binding)
    }

    /// Apple's form_post: whether the state names an open request of this provider, so that
    /// the relay page is served only for answers this server asked for.
    func isOpen(providerID: String, state: String?) -> Bool {
        guard let state, UpstreamRequestSecrets.isWellFormed(state: state),
            let record = try? store.peekRequest(
                stateDigest: UpstreamRequestSecrets.digest(state), now: system.now())
        else { return false }
        return record.provider == providerID
    }

    // MARK: - Finish

    struct Answer {
        var state: String?
        var code: String?
        var error: String?
        /// Apple's `user` JSON (first authorization only).
        var user: String?
    }

    enum Outcome {
        case signedIn(accountID: UUID, cookie: Cookie, destination: String)
        case linked(destination: String)
        /// The address belongs to an account: its owner must sign in first.
        case proveControl(token: String, email: String, providerLabel: String, uiLocales: String?)
        /// Too many new accounts from this client address or for this address.
        case throttled(retryAfter: Int)
    }

    func finish(providerID: String, answer: Answer, binding: String?, request: HTTPRequest) throws(Refusal)
        -> Outcome
    {
        let now = system.now()
        // Step 1. The request, used once, whatever follows.
        let stored: UpstreamRequestRecord?
        if let state = answer.state, UpstreamRequestSecrets.isWellFormed(state: state) {
            do {
                stored = try store.consumeRequest(stateDigest: UpstreamRequestSecrets.digest(state))
            } catch {
                throw .unavailable
            }
        } else {
            stored = nil
        }
        // Step 2. The callback's checks (state, provider, browser, the provider's error, a code).
        let code: String
        do {
            code = try UpstreamCallback.check(
                state: answer.state, code: answer.code, error: answer.error, bindingCookie: binding,
                stored: stored.map {
                    UpstreamCallback.Stored(
                        provider: $0.provider, bindingDigest: $0.bindingDigest, expiresAt: $0.expiresAt)
                }, provider: providerID, now: now)
        } catch {
            failed(providerID, request, reason: Self.reasonName(error))
            switch error {
            case .upstreamError: throw .cancelled
            case .otherBrowser: throw .otherBrowser
            case .malformedState, .unknownState, .wrongProvider: throw .expired
            case .missingCode: throw .failed("missing_code")
            }
        }
        guard let stored, let state = answer.state,
            let provider = oauth.configuration.upstreamProvider(id: providerID)
        else { throw .unknownProvider }
        // Step 3. The code, exchanged with the PKCE verifier derived from the state.
        let secrets = UpstreamRequestSecrets(key: oauth.signingKeys.upstreamStateKey)
        let (claims, refreshToken) = try verifiedClaims(
            provider, code: code, state: state, secrets: secrets, user: answer.user, request: request)
        // Step 4. What the identity is for.
        switch stored.purpose {
        case .link:
            guard let accountID = stored.accountID else { throw .failed("no_account") }
            return try linkFromAccount(
                claims, accountID: accountID, returnTo: stored.returnTo, refreshToken: refreshToken,
                request: request)
        case .signIn:
            return try signIn(
                claims, provider: provider, returnTo: stored.returnTo, uiLocales: stored.uiLocales,
                refreshToken: refreshToken, request: request)
        }
    }

    /// The case of an error without its associated text (which may come from the provider):
    /// what the log and the audit event say.
    static func reasonName(_ error: any Error) -> String {
        String(String(describing: error).prefix { $0.isLetter || $0.isNumber || $0 == "_" }.prefix(40))
    }

    private func failed(_ providerID: String, _ request: HTTPRequest, reason: String, account: UUID? = nil) {
        oauth.log.warning("upstream.callback", ["provider": providerID, "reason": reason])
        services.metrics.increment("auth_sign_ins_total", ["method": "upstream", "result": "failure"])
        services.record(
            AuditEvent(
                kind: .signInFailed, actor: .user, accountID: account, clientAddress: request.remoteAddress,
                detail: ["method": "upstream:\(providerID)", "reason": String(reason.prefix(64))]))
    }

    /// Exchanges the code and verifies the ID token (OpenID Connect Core §3.1.3.5–§3.1.3.7).
    private func verifiedClaims(
        _ provider: UpstreamProvider, code: String, state: String, secrets: UpstreamRequestSecrets,
        user: String?,
        request: HTTPRequest
    ) throws(Refusal) -> (UpstreamClaims, refreshToken: String?) {
        let tokenEndpoint: String
        let jwksURI: String
        let clientID: String
        switch provider.kind {
        case .apple(let settings):
            tokenEndpoint = settings.endpoints.token
            jwksURI = settings.endpoints.keys
            clientID = settings.servicesID ?? ""
        case .oidc(let settings):
            do {
                let endpoints = try UpstreamDiscovery.shared.endpoints(
                    issuer: provider.issuer, fetch: provider.fetch)
                tokenEndpoint = endpoints.token
                jwksURI = endpoints.jwks
            } catch {
                failed(provider.id, request, reason: "discovery")
                throw .unavailable
            }
            clientID = settings.clientID
        }
        let tokens: UpstreamTokenClient.Tokens
        do {
            tokens = try UpstreamTokenClient(
                provider: provider, now: system.now(), assertionID: Base64URL.encode(system.randomBytes(16))
            ).exchange(
                code: code, codeVerifier: secrets.codeVerifier(forState: state),
                redirectURI: redirectURI(provider),
                tokenEndpoint: tokenEndpoint)
        } catch {
            failed(provider.id, request, reason: "token_" + Self.reasonName(error))
            throw .failed("token")
        }
        let keyID = UpstreamIDTokenVerifier.keyID(of: tokens.idToken)
        let token: UpstreamIDToken
        do {
            let keys = try ClientKeyFetcher.shared.keys(at: jwksURI, keyID: keyID, fetch: provider.fetch)
            token = try UpstreamIDTokenVerifier(issuer: provider.issuer, audiences: [clientID], keys: keys)
                .verify(
                    tokens.idToken, nonce: secrets.nonce(forState: state), now: system.now())
        } catch {
            failed(provider.id, request, reason: "id_token_" + Self.reasonName(error))
            throw .failed("id_token")
        }
        // Apple's name arrives beside the token, on the first authorization only.
        let name = AppleUserInfo(json: provider.apple != nil ? user : nil)?.displayName ?? token.name
        let claims = UpstreamClaims(
            provider: provider.id, issuer: provider.issuer, subject: token.subject, email: token.email,
            emailVerified: token.emailVerified, isPrivateEmail: token.isPrivateEmail, name: name)
        // Apple's refresh token is kept (sealed) to revoke it when the account is deleted; a
        // generic provider's is not used.
        return (claims, provider.apple != nil ? tokens.refreshToken : nil)
    }

    /// The linking rule for a sign-in from /signin or /signup.
    private func signIn(
        _ claims: UpstreamClaims, provider: UpstreamProvider, returnTo: String, uiLocales: String?,
        refreshToken: String?, request: HTTPRequest
    ) throws(Refusal) -> Outcome {
        let now = system.now()
        do {
            return try store.transaction { store throws -> Outcome in
                switch try UpstreamAccounts.decide(claims, on: store.db) {
                case .signIn(let accountID, let identityID):
                    // A linked identity: its account, unless disabled.
                    guard let account = try store.account(accountID), !account.disabled else {
                        throw Refusal.disabled
                    }
                    try UpstreamIdentityStore.touch(
                        id: identityID, email: claims.email, emailVerified: claims.emailVerified,
                        isPrivateEmail: claims.isPrivateEmail, at: now, on: store.db)
                    try keep(refreshToken, identityID: identityID, on: store.db)
                    return try startSession(
                        accountID, claims: claims, returnTo: returnTo, request: request, store: store)
                case .create:
                    // Counted like every sign-up (per address and per client address), so a
                    // provider cannot be used to create accounts at speed; the count commits
                    // even when it refuses.
                    let settings = services.configuration.signUp
                    let counts = try WindowCounter.hit(
                        .signUpAttempts,
                        .init(
                            scope: "email",
                            subject: claims.email.flatMap(EmailAddress.init)?.normalized
                                ?? "\(claims.issuer) \(claims.subject)"),
                        .init(scope: "client", subject: request.remoteAddress),
                        windowSeconds: settings.windowSeconds, on: store.db)
                    if let wait = SignUpThrottle.wait(counts, settings: settings) {
                        return .throttled(retryAfter: wait)
                    }
                    // A new account with the identity linked, in this transaction.
                    let created = try UpstreamAccounts.createAccount(
                        claims, userHandle: system.randomBytes(32), at: now, on: store.db)
                    try keep(refreshToken, identityID: created.identityID, on: store.db)
                    try store.record(
                        AuditEvent(
                            kind: .accountCreated, actor: .user, accountID: created.accountID,
                            clientAddress: request.remoteAddress,
                            detail: ["method": "upstream:\(claims.provider)"]))
                    try store.record(
                        AuditEvent(
                            kind: .upstreamLinked, actor: .user, accountID: created.accountID,
                            clientAddress: request.remoteAddress,
                            detail: ["provider": claims.provider, "how": "sign_up"]))
                    return try startSession(
                        created.accountID, claims: claims, returnTo: returnTo, request: request, store: store)
                case .proveControl(let accountID):
                    // The address is an account's, verified on both sides: its owner signs in
                    // first. Apple's refresh token waits, sealed under the id the identity will
                    // have, in the revocation queue: due a minute after the link expires unused,
                    // taken back by the link.
                    let token = Base64URL.encode(system.randomBytes(32))
                    let identityID = system.uuid()
                    let expiresAt = now.addingTimeInterval(Self.pendingLinkLifetime)
                    try store.insertPendingLink(
                        tokenDigest: UpstreamRequestSecrets.digest(token),
                        UpstreamPendingLink(
                            accountID: accountID, claims: claims, returnTo: returnTo, createdAt: now,
                            expiresAt: expiresAt, identityID: identityID))
                    if let refreshToken {
                        try UpstreamTokenRevocations.queue(
                            sealed: try oauth.signingKeys.sealUpstreamToken(
                                refreshToken, identityID: identityID),
                            identityID: identityID, clientID: nil, id: system.timeOrderedUUID(),
                            notBefore: expiresAt.addingTimeInterval(60), on: store.db)
                    }
                    oauth.log.info(
                        "upstream.callback", ["provider": claims.provider, "step": "proveControl"])
                    return .proveControl(
                        token: token, email: claims.email ?? "", providerLabel: provider.label,
                        uiLocales: uiLocales)
                }
            }
        } catch let refusal as Refusal {
            if refusal == .disabled { failed(claims.provider, request, reason: "account_disabled") }
            throw refusal
        } catch UpstreamAccounts.CreateError.conflict {
            failed(claims.provider, request, reason: "conflict")
            throw .failed("conflict")
        } catch {
            oauth.log.error(
                "upstream.callback", ["step": "signIn", "reason": String(describing: type(of: error))])
            throw .unavailable
        }
    }

    private func startSession(
        _ accountID: UUID, claims: UpstreamClaims, returnTo: String, request: HTTPRequest,
        store: any UpstreamSignInStore
    ) throws -> Outcome {
        let (token, _) = try services.sessions.start(
            SessionStart(adding: request, accountID: accountID, amr: Self.amr, cookies: services.cookies),
            on: store.db)
        try store.record(
            AuditEvent(
                kind: .signInSucceeded, actor: .user, accountID: accountID,
                clientAddress: request.remoteAddress,
                detail: ["method": "upstream:\(claims.provider)"]))
        services.metrics.increment("auth_sign_ins_total", ["method": "upstream", "result": "success"])
        oauth.log.info(
            "upstream.callback",
            ["provider": claims.provider, "step": "signedIn", "account": accountID.uuidString])
        return .signedIn(accountID: accountID, cookie: services.cookies.session(token), destination: returnTo)
    }

    /// Apple's refresh token, sealed under the key-encryption key and bound to the identity:
    /// kept only so that it can be revoked at Apple when the account goes. A newer one replaces
    /// it; the older is not revoked (a revocation at Apple ends the user's authorization).
    private func keep(_ refreshToken: String?, identityID: UUID, on db: any SQLExecutor) throws {
        guard let refreshToken else { return }
        try keep(
            sealed: try oauth.signingKeys.sealUpstreamToken(refreshToken, identityID: identityID),
            identityID: identityID, on: db)
    }

    private func keep(sealed: [UInt8]?, identityID: UUID, on db: any SQLExecutor) throws {
        guard let sealed else { return }
        try UpstreamIdentityStore.setRefreshToken(id: identityID, ciphertext: sealed, on: db)
    }

    /// "Link another" from /account: the identity goes to the account that started the
    /// request, and only while that account is still the one signed in here.
    private func linkFromAccount(
        _ claims: UpstreamClaims, accountID: UUID, returnTo: String, refreshToken: String?,
        request: HTTPRequest
    ) throws(Refusal) -> Outcome {
        guard let session = try? services.sessions.current(request), session.accountID == accountID else {
            failed(claims.provider, request, reason: "link_session_changed", account: accountID)
            throw .notSignedIn
        }
        try link(
            claims, accountID: accountID, session: session, how: "account", refreshToken: refreshToken,
            request: request)
        return .linked(destination: returnTo)
    }

    /// Links in one transaction with its audit event; an identity of another account is refused.
    /// Under the account's lock and while `session`, which asked for the link, is still live: a
    /// password change or sign-out everywhere that ended it meanwhile is waited for and refuses
    /// the link.
    private func link(
        _ claims: UpstreamClaims, accountID: UUID, session: CurrentSession, how: String,
        refreshToken: String? = nil, pending: UpstreamPendingLink? = nil, request: HTTPRequest
    ) throws(Refusal) {
        let now = system.now()
        do {
            try store.transaction { store in
                try AccountStore.lock(accountID: accountID, on: store.db)
                guard try SessionStore.holdLive(session, on: store.db) else { throw Refusal.notSignedIn }
                if let existing = try UpstreamIdentityStore.find(
                    issuer: claims.issuer, subject: claims.subject, on: store.db)
                {
                    guard existing.accountID == accountID else { throw Refusal.alreadyLinkedElsewhere }
                    return
                }
                let identityID = try UpstreamAccounts.link(
                    claims, accountID: accountID, id: pending?.identityID, at: now, on: store.db)
                try keep(refreshToken, identityID: identityID, on: store.db)
                if let waiting = pending?.identityID {
                    try keep(
                        sealed: try UpstreamTokenRevocations.take(identityID: waiting, on: store.db),
                        identityID: identityID, on: store.db)
                }
                try store.record(
                    AuditEvent(
                        kind: .upstreamLinked, actor: .user, accountID: accountID,
                        clientAddress: request.remoteAddress,
                        detail: ["provider": claims.provider, "how": how]))
            }
        } catch Refusal.notSignedIn {
            failed(claims.provider, request, reason: "link_session_ended", account: accountID)
            throw .notSignedIn
        } catch let refusal as Refusal {
            failed(claims.provider, request, reason: "linked_elsewhere", account: accountID)
            throw refusal
        } catch UpstreamIdentityStore.InsertError.alreadyLinked {
            failed(claims.provider, request, reason: "linked_elsewhere", account: accountID)
            throw .alreadyLinkedElsewhere
        } catch {
            oauth.log.error("upstream.link", ["reason": String(describing: type(of: error))])
            throw .unavailable
        }
    }

    // MARK: - Proof of control

    /// The pending link of this browser, and the signed-in account's address when the signed-in
    /// account is the one that holds the identity's address and signed in after the link was
    /// asked for.
    struct PendingView {
        var link: UpstreamPendingLink
        var providerLabel: String
        /// Nil: the browser is not signed in to that account (yet).
        var accountEmail: String?
    }

    func pending(token: String?, request: HTTPRequest) throws(Refusal) -> PendingView {
        guard let token,
            let link = try? store.pendingLink(
                tokenDigest: UpstreamRequestSecrets.digest(token), now: system.now())
        else { throw .expired }
        let label =
            oauth.configuration.upstreamProvider(id: link.claims.provider)?.label ?? link.claims.provider
        var email: String?
        if let session = try? services.sessions.current(request), session.accountID == link.accountID,
            session.authTime >= link.createdAt.addingTimeInterval(-1)
        {
            email = (try? store.account(link.accountID))?.email
        }
        return PendingView(link: link, providerLabel: label, accountEmail: email)
    }

    /// Makes the pending link, once, when the signed-in account is the one that holds the
    /// address and it signed in (passkey or password) after the link was asked for. Signing in
    /// to any other account links nothing.
    func completePendingLink(token: String?, request: HTTPRequest) throws(Refusal) -> String {
        let now = system.now()
        guard let token else { throw .expired }
        guard let session = try? services.sessions.current(request) else { throw .notSignedIn }
        let digest = UpstreamRequestSecrets.digest(token)
        guard let peeked = try? store.pendingLink(tokenDigest: digest, now: now) else { throw .expired }
        guard session.accountID == peeked.accountID,
            session.authTime >= peeked.createdAt.addingTimeInterval(-1),
            !session.amr.allSatisfy({ Self.amr.contains($0) })
        else {
            failed(
                peeked.claims.provider, request, reason: "proof_by_other_account", account: session.accountID)
            throw .notSignedIn
        }
        guard let pending = try? store.consumePendingLink(tokenDigest: digest, now: now) else {
            throw .expired
        }
        guard let account = try? store.account(pending.accountID), !account.disabled else { throw .disabled }
        try link(
            pending.claims, accountID: pending.accountID, session: session, how: "proof", pending: pending,
            request: request)
        return pending.returnTo
    }
}

extension UpstreamSignInFlow {
    /// The buttons of /signin and /signup, in the configured order.
    static func buttons(_ configuration: Configuration) -> [UpstreamButton] {
        buttonProviders(configuration).map { provider in
            UpstreamButton(
                id: provider.id,
                kind: provider.apple != nil ? .apple : .oidc(label: provider.label, iconURL: provider.iconURL)
            )
        }
    }
}
