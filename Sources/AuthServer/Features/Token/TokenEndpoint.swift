import Crypto
import Foundation
import HTTPServer
import OIDC
import Postgres

/// `POST /token` (RFC 6749 §3.2): authenticate the client, parse the grant, check it against
/// stored state, issue tokens. Every answer carries `Cache-Control: no-store`.
struct TokenEndpoint: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let endpoint = self
        router.post("/token") { request, _ in
            endpoint.oauth.protocolEndpoint("token") { try endpoint.token(request) }
        }
    }

    func token(_ request: HTTPRequest) throws -> HTTPResponse {
        let parameters = try OAuthServices.formParameters(request)
        let authenticated = try ClientAuthenticator(oauth: oauth).authenticate(
            request, parameters: parameters)
        let client = authenticated.client
        let grant = try TokenRequest.parse(parameters)
        try grant.checkAllowed(for: client)
        let response: TokenResponse
        let grantType: String
        switch grant {
        case .authorizationCode(let code, let redirectURI, let verifier):
            response = try redeemCode(
                code, redirectURI: redirectURI, verifier: verifier, client: client,
                clientAddress: request.remoteAddress)
            grantType = "authorization_code"
        case .refreshToken(let token, let scope):
            response = try refresh(token, scope: scope, client: client, clientAddress: request.remoteAddress)
            grantType = "refresh_token"
        case .clientCredentials(let scope):
            response = try clientCredentials(scope: scope, client: client)
            grantType = "client_credentials"
        }
        oauth.metrics.increment("auth_tokens_issued_total", ["grant_type": grantType])
        return OAuthServices.json(response.jsonBody)
    }

    // MARK: - authorization_code

    private enum CodeOutcome {
        case issued(TokenResponse)
        case refused(OAuthError)
    }

    func redeemCode(
        _ code: String, redirectURI: String, verifier: String?, client: OAuthClient,
        clientAddress: String = ""
    ) throws
        -> TokenResponse
    {
        let outcome: CodeOutcome = try oauth.pool.withTransaction { connection in
            switch try OAuthStore.consumeCode(code, on: connection) {
            case .unknown:
                return .refused(
                    .init(.invalidGrant, hint: "The authorization code is invalid, expired or already used."))
            case .replayed(let codeID):
                // RFC 6749 §4.1.2: a code used twice revokes what it produced.
                try OAuthStore.revokeIssuedFromCode(codeID, on: connection)
                oauth.log.warning("token.code_replayed", ["client_id": client.clientID])
                try AuditLog.record(
                    AuditEvent(
                        kind: .authorizationCodeReplayed, actor: .system,
                        accountID: try OAuthStore.codeAccount(codeID, on: connection),
                        clientID: client.clientID,
                        clientAddress: clientAddress), on: connection)
                oauth.metrics.increment("auth_code_replays_total")
                return .refused(
                    .init(.invalidGrant, hint: "The authorization code is invalid, expired or already used."))
            case .fresh(let codeID, let stored, let now, let accountDisabled, let sessionEnded):
                do throws(OAuthError) {
                    _ = try TokenGrantValidation.authorizationCode(
                        code: stored, redirectURI: redirectURI, codeVerifier: verifier, client: client,
                        now: now)
                } catch {
                    // The code stays consumed: a failed redemption burns it.
                    return .refused(error)
                }
                guard let accountID = UUID(uuidString: stored.accountID) else {
                    return .refused(OAuthError(.serverError, hint: ""))
                }
                if accountDisabled || sessionEnded {
                    return .refused(
                        .init(
                            .invalidGrant, hint: "The authorization code is invalid, expired or already used."
                        ))
                }
                let grant = OAuthStore.RefreshGrant(
                    familyID: UUID.random(), clientID: client.clientID, accountID: accountID,
                    sessionID: stored.sessionID.flatMap(UUID.init(uuidString:)), scopes: stored.scopes,
                    authTime: stored.authTime, amr: stored.amr)
                return .issued(
                    try issue(
                        grant: grant, client: client, nonce: stored.nonce,
                        idTokenClaims: stored.idTokenClaims,
                        newFamily: true, codeID: codeID, now: now, on: connection))
            }
        }
        switch outcome {
        case .issued(let response): return response
        case .refused(let error): throw error
        }
    }

    // MARK: - refresh_token

    private enum RefreshOutcome {
        case issued(TokenResponse)
        case reused
        case invalid(String)
    }

    private struct RollBack: Error { var error: OAuthError }

    func refresh(_ token: String, scope: [String]?, client: OAuthClient, clientAddress: String = "") throws
        -> TokenResponse
    {
        let outcome: RefreshOutcome
        do {
            outcome = try oauth.pool.withTransaction { connection in
                switch try OAuthStore.rotateRefreshToken(token, on: connection) {
                case .invalid(let reason):
                    return .invalid(reason)
                case .reused(let familyID, let clientID):
                    guard clientID == client.clientID else { return .invalid("other client") }
                    try OAuthStore.revokeFamily(familyID, reason: "refresh_token_reuse", on: connection)
                    oauth.log.warning(
                        "token.refresh_reused", ["client_id": client.clientID, "family": familyID.uuidString])
                    try AuditLog.record(
                        AuditEvent(
                            kind: .refreshTokenReuseDetected, actor: .system,
                            accountID: try OAuthStore.familyAccount(familyID, on: connection),
                            clientID: client.clientID, clientAddress: clientAddress,
                            detail: ["family": familyID.uuidString.lowercased()]), on: connection)
                    oauth.metrics.increment("auth_refresh_token_reuse_total")
                    return .reused
                case .rotated(var grant, let now):
                    // Another client's token must not be burnt by this request: roll back.
                    guard grant.clientID == client.clientID else {
                        throw RollBack(
                            error: .init(
                                .invalidGrant, hint: "The refresh token was issued to another client."))
                    }
                    do throws(OAuthError) {
                        grant.scopes = try TokenGrantValidation.refreshScope(
                            requested: scope, granted: grant.scopes)
                    } catch {
                        throw RollBack(error: error)
                    }
                    return .issued(
                        try issue(
                            grant: grant, client: client, nonce: nil, idTokenClaims: [], newFamily: false,
                            codeID: nil,
                            now: now, on: connection))
                }
            }
        } catch let rollBack as RollBack {
            throw rollBack.error
        }
        switch outcome {
        case .issued(let response): return response
        case .reused, .invalid:
            throw OAuthError(.invalidGrant, hint: "The refresh token is invalid, expired or revoked.")
        }
    }

    // MARK: - client_credentials

    func clientCredentials(scope: [String], client: OAuthClient) throws -> TokenResponse {
        let scopes = TokenGrantValidation.clientCredentialsScope(requested: scope, client: client)
        let lifetime = oauth.settings.accessTokenLifetimeSeconds
        let jti = oauth.tokens.next()
        // The record goes first, as it gives the time the claims are built from; a record whose
        // token is never sent (signing failed) is harmless.
        let now = try OAuthStore.recordClientAccessToken(
            jti: jti, clientID: client.clientID, scopes: scopes, lifetimeSeconds: lifetime, on: oauth.pool)
        let claims = AccessTokenClaims(
            issuer: oauth.issuer, audience: oauth.issuer, subject: client.clientID, clientID: client.clientID,
            expiresAt: now.addingTimeInterval(Double(lifetime)), issuedAt: now, jwtID: jti, scope: scopes,
            authTime: nil)
        let accessToken = try claims.sign(with: try oauth.serverSigner())
        return TokenResponse(
            accessToken: accessToken, expiresIn: lifetime, refreshToken: nil, idToken: nil, scope: scopes)
    }

    // MARK: - Issuing

    /// Access token (always), refresh token (see `TokenGrantValidation.issuesRefreshToken`;
    /// a refresh grant always rotates), ID token (for `openid`).
    /// `auth_time` and `amr` come from the original authentication, never from now.
    private func issue(
        grant: OAuthStore.RefreshGrant, client: OAuthClient, nonce: String?, idTokenClaims: Set<String>,
        newFamily: Bool,
        codeID: UUID?, now: Date, on connection: PostgresConnection
    ) throws -> TokenResponse {
        let subject = grant.accountID.uuidString.lowercased()
        let lifetime = oauth.settings.accessTokenLifetimeSeconds
        let jti = oauth.tokens.next()
        let accessClaims = AccessTokenClaims(
            issuer: oauth.issuer, audience: oauth.issuer, subject: subject, clientID: client.clientID,
            expiresAt: now.addingTimeInterval(Double(lifetime)), issuedAt: now, jwtID: jti,
            scope: grant.scopes,
            authTime: grant.authTime, amr: grant.amr)
        let accessToken = try accessClaims.sign(with: try oauth.serverSigner())

        let mayRefresh = TokenGrantValidation.issuesRefreshToken(client: client, scopes: grant.scopes)
        let refreshToken = mayRefresh || !newFamily ? oauth.tokens.next() : nil
        try OAuthStore.recordIssued(
            grant, createFamily: newFamily && mayRefresh, refreshToken: refreshToken, accessTokenID: jti,
            accessExpiresAt: accessClaims.expiresAt, codeID: codeID,
            absoluteSeconds: oauth.settings.refreshTokenAbsoluteSeconds,
            idleSeconds: oauth.settings.refreshTokenIdleSeconds, on: connection)

        var idToken: String?
        if grant.scopes.contains(Scopes.openid) {
            let signer = try oauth.idTokenSigner(for: client)
            let available = idTokenClaims.isEmpty ? [:] : try oauth.userClaims(accountID: grant.accountID)
            let claims = IDTokenClaims(
                issuer: oauth.issuer, subject: subject, audience: client.clientID,
                expiresAt: now.addingTimeInterval(Double(oauth.settings.idTokenLifetimeSeconds)),
                issuedAt: now,
                authTime: grant.authTime, nonce: nonce, amr: grant.amr,
                sessionID: grant.sessionID?.uuidString.lowercased(),
                accessTokenHash: IDTokenClaims.accessTokenHash(accessToken, algorithm: signer.algorithm),
                userClaims: IDTokenClaims.selecting(idTokenClaims, from: available))
            idToken = try claims.sign(with: signer)
        }
        return TokenResponse(
            accessToken: accessToken, expiresIn: lifetime, refreshToken: refreshToken, idToken: idToken,
            scope: grant.scopes)
    }
}

/// Client authentication for /token, /revoke and /introspect: extract, look up,
/// authenticate, and record a `private_key_jwt` assertion id so it works only once.
struct ClientAuthenticator: Sendable {
    let oauth: OAuthServices

    func authenticate(_ request: HTTPRequest, parameters: Parameters) throws -> AuthenticatedClient {
        let presented = try ClientAuthentication.extract(
            authorization: request.headers["Authorization"], parameters: parameters)
        let authenticated = try ClientAuthentication.authenticate(
            presented, client: oauth.clients.client(presented.clientID),
            audiences: oauth.discovery.clientAssertionAudiences,
            now: Date())
        if let jti = authenticated.assertionID, let expiresAt = authenticated.assertionExpiresAt {
            guard
                try OAuthStore.recordAssertion(
                    clientID: authenticated.client.clientID, jti: jti, expiresAt: expiresAt, on: oauth.pool)
            else {
                throw OAuthError(
                    .invalidClient, hint: "The client assertion was already used.",
                    debug: "assertion jti replay")
            }
        }
        return authenticated
    }
}
