import Foundation
import OIDC

/// The three grants of `POST /token` (RFC 6749 §4.1.3, §6, §4.4), each read top to bottom:
/// find and consume the one-time value, check it against the request (pure checks in
/// `TokenGrantValidation`), then issue and record the tokens, in one transaction; the tokens
/// are signed once it has committed. Refusals are `OAuthError`s; the answer is the
/// `TokenResponse` to send.
struct TokenFlow {
    let oauth: OAuthServices
    let store: any TokenStore

    /// The refusal for a code that is unknown, used, expired, or whose account or session
    /// ended: the client learns no more than that.
    static let codeUnusable = OAuthError(
        .invalidGrant, hint: "The authorization code is invalid, expired or already used.")

    /// The grant of an authenticated client: allowed for that client, then run.
    /// `resources`: the request's `resource` values (RFC 8707 §2), which pick the API the
    /// access token is for.
    /// `dpop`: the request's verified DPoP proof (RFC 9449 §5), whose key the tokens are bound to.
    func exchange(
        _ grant: TokenRequest, client: OAuthClient, clientAddress: String, resources: [String] = [],
        dpop: DPoPProof? = nil
    ) throws -> TokenResponse {
        try grant.checkAllowed(for: client)
        switch grant {
        case .authorizationCode(let code, let redirectURI, let verifier):
            return try authorizationCode(
                code, redirectURI: redirectURI, verifier: verifier, client: client,
                clientAddress: clientAddress, resources: resources, dpop: dpop)
        case .refreshToken(let token, let scope):
            return try refreshToken(
                token, scope: scope, client: client, clientAddress: clientAddress, resources: resources,
                dpop: dpop)
        case .clientCredentials(let scope):
            return try clientCredentials(scope: scope, client: client, resources: resources, dpop: dpop)
        case .tokenExchange(let request):
            return try tokenExchange(
                request, client: client, clientAddress: clientAddress, resources: resources, dpop: dpop)
        }
    }

    // MARK: - authorization_code

    private enum CodeOutcome {
        case issued(UnsignedTokens)
        case refused(OAuthError)
    }

    /// RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.6). A refusal after the code was found still
    /// commits its consumption: a failed redemption burns the code.
    func authorizationCode(
        _ code: String, redirectURI: String?, verifier: String?, client: OAuthClient,
        clientAddress: String = "", resources: [String] = [], dpop: DPoPProof? = nil
    ) throws -> TokenResponse {
        // Keys before the transaction: a key reload must not take a second connection.
        let signers = try TokenSigners(oauth: oauth, client: client)
        let catalog = oauth.resources
        let response = try store.transaction({ store -> CodeOutcome in
            // 0. A DPoP proof is used once, on any instance (RFC 9449 §11.1): a replayed
            // proof is refused before the code is touched.
            if let dpop, try !store.recordDPoPProof(dpop) {
                return .refused(DPoPProofs.replayed(at: .authorizationServer))
            }
            // 1. Find the code and consume it, in one statement: a racing request finds it used.
            let redeemed: RedeemedCode
            switch try store.consumeCode(code) {
            case .unknown:
                return .refused(Self.codeUnusable)
            case .replayed(let codeID, let accountID):
                // RFC 6749 §4.1.2: a code used twice revokes what it produced.
                try store.revokeIssuedFromCode(codeID)
                oauth.log.warning("token.code_replayed", ["client_id": client.clientID])
                try store.record(
                    AuditEvent(
                        kind: .authorizationCodeReplayed, actor: .system, accountID: accountID,
                        clientID: client.clientID, clientAddress: clientAddress))
                oauth.metrics.increment("auth_code_replays_total")
                return .refused(Self.codeUnusable)
            case .fresh(let found):
                redeemed = found
            }
            // 2. Client, expiry, redirect_uri and PKCE against what the code was issued for.
            do throws(OAuthError) {
                _ = try TokenGrantValidation.authorizationCode(
                    code: redeemed.issued, redirectURI: redirectURI, codeVerifier: verifier, client: client,
                    now: redeemed.now)
                // A code bound with `dpop_jkt` needs a proof of that key (RFC 9449 §10).
                try DPoPPolicy.checkBinding(boundTo: redeemed.issued.dpopJKT, proofKey: dpop?.thumbprint)
            } catch {
                return .refused(error)
            }
            // 3. The account is still enabled and the browser session has not ended.
            if redeemed.accountDisabled || redeemed.sessionEnded {
                return .refused(Self.codeUnusable)
            }
            // 4. The API the access token is for: within the grant (RFC 8707 §2.2).
            let issued = redeemed.issued
            let target: ProtectedResource?
            do throws(OAuthError) {
                target = try catalog.target(
                    requested: resources, granted: issued.resources, clientID: client.clientID)
            } catch {
                return .refused(error)
            }
            // 5. Tokens: a new family when refresh tokens are allowed, and the ID token.
            var grant = RefreshGrant(
                familyID: oauth.system.timeOrderedUUID(), clientID: client.clientID, accountID: redeemed.accountID,
                sessionID: redeemed.sessionID, scopes: issued.scopes, authTime: issued.authTime,
                amr: issued.amr, idTokenClaims: issued.idTokenClaims, userinfoClaims: redeemed.userinfoClaims)
            grant.resources = issued.resources
            // A public client's refresh tokens are bound to the proof's key (RFC 9449 §5).
            grant.dpopJKT = DPoPPolicy.bindsRefreshToken(for: client) ? dpop?.thumbprint : nil
            return .issued(
                try issue(
                    grant, client: client, grantType: .authorizationCode, nonce: issued.nonce,
                    codeID: redeemed.id, now: redeemed.now, signers: signers, store: store, target: target,
                    catalog: catalog, dpop: dpop))
        }, whileCommitting: { outcome in
            // 6. Signatures, while the commit is under way (see `issue`); a refusal, once the
            // commit has spent the code.
            switch outcome {
            case .issued(let tokens): return try tokens.signed(with: signers)
            case .refused(let error): throw error
            }
        })
        oauth.metrics.increment("auth_tokens_issued_total", ["grant_type": "authorization_code"])
        return response
    }

    // MARK: - refresh_token

    private enum RefreshOutcome {
        case issued(UnsignedTokens)
        case refused
    }

    /// Thrown inside the transaction to undo the rotation before refusing.
    private struct RollBack: Error { var error: OAuthError }

    /// RFC 6749 §6 with rotation (RFC 9700 §4.14.2): the used token is replaced; a used
    /// token that comes back revokes its whole family. A token bound to a DPoP key (RFC 9449
    /// §5) presented without a proof of that key is refused and changes nothing: it is not a
    /// replay, and the rightful holder's next refresh still works.
    func refreshToken(
        _ token: String, scope: [String]?, client: OAuthClient, clientAddress: String = "",
        resources: [String] = [], dpop: DPoPProof? = nil
    ) throws -> TokenResponse {
        let signers = try TokenSigners(oauth: oauth, client: client)
        let catalog = oauth.resources
        do {
            let response = try store.transaction({ store -> RefreshOutcome in
                // 1. Find the token and rotate it (a FAPI 2.0 client's is kept, only its idle
                // expiry moves), in one statement, which also records the DPoP proof: a proof is
                // used once, on any instance (RFC 9449 §11.1).
                let grant: RefreshGrant
                let now: Date
                let rotates =
                    RefreshTokenIssuance.decide(grant: .refreshToken, client: client, scopes: []) == .rotation
                switch try store.rotateRefreshToken(
                    token, proof: dpop, rotate: rotates, idleSeconds: oauth.settings.refreshTokenIdleSeconds)
                {
                case .proofReplayed:
                    throw RollBack(error: DPoPProofs.replayed(at: .authorizationServer))
                case .invalid:
                    return .refused
                case .reused(let familyID, let clientID, let accountID):
                    // 2. A rotated token came back: its family (and every token of it) is revoked.
                    guard clientID == client.clientID else { return .refused }
                    try store.revokeFamily(familyID, reason: "refresh_token_reuse")
                    oauth.log.warning(
                        "token.refresh_reused", ["client_id": client.clientID, "family": familyID.uuidString])
                    try store.record(
                        AuditEvent(
                            kind: .refreshTokenReuseDetected, actor: .system, accountID: accountID,
                            clientID: client.clientID, clientAddress: clientAddress,
                            detail: ["family": familyID.lowercased]))
                    oauth.metrics.increment("auth_refresh_token_reuse_total")
                    return .refused
                case .rotated(let rotated, let at):
                    (grant, now) = (rotated, at)
                }
                // 3. Another client's token must not be burnt by this request: roll back.
                guard grant.clientID == client.clientID else {
                    throw RollBack(
                        error: .init(.invalidGrant, hint: "The refresh token was issued to another client."))
                }
                // 3b. A key-bound token without a proof of its key: roll back, revoke nothing.
                do throws(OAuthError) {
                    try DPoPPolicy.checkBinding(boundTo: grant.dpopJKT, proofKey: dpop?.thumbprint)
                } catch {
                    oauth.log.warning(
                        "token.refresh_key_mismatch",
                        [
                            "client_id": client.clientID, "family": grant.familyID.lowercased,
                            "error": error.error,
                        ])
                    oauth.metrics.increment("auth_dpop_refresh_refusals_total")
                    throw RollBack(error: error)
                }
                // 4. A narrower scope may be asked for, never a wider one.
                var narrowed = grant
                do throws(OAuthError) {
                    narrowed.scopes = try TokenGrantValidation.refreshScope(
                        requested: scope, granted: grant.scopes)
                } catch {
                    throw RollBack(error: error)
                }
                // 5. The API the access token is for: one of the family's (RFC 8707 §2.2).
                let target: ProtectedResource?
                do throws(OAuthError) {
                    target = try catalog.target(
                        requested: resources, granted: grant.resources, clientID: client.clientID)
                } catch {
                    throw RollBack(error: error)
                }
                // 6. Tokens: the next refresh token of the family, and the ID token.
                return .issued(
                    try issue(
                        narrowed, client: client, grantType: .refreshToken, nonce: nil, codeID: nil, now: now,
                        signers: signers, store: store, target: target, catalog: catalog, dpop: dpop))
            }, whileCommitting: { outcome in
                // 7. Signatures, while the commit is under way (see `issue`); a refusal, once
                // the commit has revoked what a reused token's family holds.
                switch outcome {
                case .issued(let tokens): return try tokens.signed(with: signers)
                case .refused: throw OAuthError(.invalidGrant, hint: "The refresh token is invalid, expired or revoked.")
                }
            })
            oauth.metrics.increment("auth_tokens_issued_total", ["grant_type": "refresh_token"])
            return response
        } catch let rollBack as RollBack {
            throw rollBack.error
        }
    }

    // MARK: - client_credentials

    /// RFC 6749 §4.4: an access token for the client itself, no refresh or ID token.
    func clientCredentials(
        scope: [String], client: OAuthClient, resources: [String] = [], dpop: DPoPProof? = nil
    ) throws -> TokenResponse {
        // 0. A DPoP proof is used once (RFC 9449 §11.1).
        if let dpop, try !store.recordDPoPProof(dpop, asynchronousCommit: true) {
            throw DPoPProofs.replayed(at: .authorizationServer)
        }
        // 1. `resource` and API scopes: configured and allowed for the client (RFC 8707 §2).
        let catalog = oauth.resources
        let selection = try catalog.select(resources: resources, scopes: scope, clientID: client.clientID)
        // 2. One API per token: named by `resource`, or the only one the scopes name.
        guard resources.count <= 1, resources.count == 1 || selection.resources.count <= 1 else {
            throw OAuthError(.invalidTarget, hint: "Name one 'resource' per token request.")
        }
        let target = try catalog.target(
            requested: resources, granted: selection.resources, clientID: client.clientID)
        // 3. The scope: the client's own, never a user's; for an API, its scopes only.
        let granted =
            TokenGrantValidation.clientCredentialsScope(requested: selection.otherScopes, client: client)
            + selection.apiScopes
        let scopes = catalog.tokenScopes(granted: granted, for: target)
        let lifetime = target?.tokenLifetimeSeconds ?? oauth.settings.accessTokenLifetimeSeconds
        // 4. The token. An opaque one is its record. A JWT has none: it concerns no account,
        // session or family, so only its client's revocation ends it early, and that writes
        // the record which refuses it (`gty` tells readers so).
        let accessToken: String
        if target?.tokenFormat == .opaque {
            accessToken = oauth.tokens.next()
            try store.recordClientAccessToken(
                jti: oauth.system.timeOrderedToken(), clientID: client.clientID, scopes: scopes,
                lifetimeSeconds: lifetime, audience: target?.identifier,
                tokenDigest: OAuthStore.digest(accessToken), dpopJKT: dpop?.thumbprint)
        } else {
            let now = oauth.system.now()
            var claims = AccessTokenClaims(
                issuer: oauth.issuer, audience: target?.identifier ?? oauth.issuer, subject: client.clientID,
                clientID: client.clientID, expiresAt: now.addingTimeInterval(Double(lifetime)), issuedAt: now,
                jwtID: oauth.system.timeOrderedToken(), scope: scopes, authTime: nil)
            claims.confirmationJKT = dpop?.thumbprint
            claims.grantType = AccessTokenClaims.clientCredentials
            accessToken = try claims.sign(with: try oauth.serverSigner())
        }
        oauth.metrics.increment("auth_tokens_issued_total", ["grant_type": "client_credentials"])
        var response = TokenResponse(
            accessToken: accessToken, expiresIn: lifetime, refreshToken: nil, idToken: nil, scope: scopes)
        if dpop != nil { response.tokenType = "DPoP" }
        return response
    }

    // MARK: - Issuing

    /// Access token (always), refresh token (`RefreshTokenIssuance`), ID token (for `openid`),
    /// recorded through `store` (the grant's transaction) and returned unsigned: the caller
    /// signs them (`UnsignedTokens.signed`) once the `COMMIT` is sent, while PostgreSQL
    /// commits, so that no row lock is held while RSA signs (about a millisecond per token)
    /// and the commit's wait for the disk costs no time. The tokens leave only if the commit
    /// succeeded. What is recorded names the tokens by values only their holder has (the
    /// access token's `jti`, digests of random tokens); if signing fails, nobody holds them and
    /// the rows are dead. `auth_time`, `amr` and `acr` come from the original
    /// authentication, never from now; the ID token carries the claims the authorization
    /// request asked for (`claims`, Core §5.5), at refresh too.
    func issue(
        _ grant: RefreshGrant, client: OAuthClient, grantType: OAuthClient.GrantType, nonce: String?,
        codeID: UUID?, now: Date, signers: TokenSigners, store: any TokenStore,
        target: ProtectedResource? = nil, catalog: ResourceCatalog = .empty, dpop: DPoPProof? = nil
    ) throws -> UnsignedTokens {
        // Access token: for the API `target` (its audience, scopes, lifetime, format and
        // claims, RFC 9068 §2.2), else for this server's own endpoints.
        let subject = grant.accountID.lowercased
        let acr = AuthenticationContextClass.of(amr: grant.amr).rawValue
        let lifetime = target?.tokenLifetimeSeconds ?? oauth.settings.accessTokenLifetimeSeconds
        let accessScopes = catalog.tokenScopes(granted: grant.scopes, for: target)
        let jti = oauth.system.timeOrderedToken()
        var accessClaims = AccessTokenClaims(
            issuer: oauth.issuer, audience: target?.identifier ?? oauth.issuer, subject: subject,
            clientID: client.clientID, expiresAt: now.addingTimeInterval(Double(lifetime)), issuedAt: now,
            jwtID: jti, scope: accessScopes, authTime: grant.authTime, acr: acr, amr: grant.amr)
        // A DPoP-bound access token names its key (RFC 9449 §6.1).
        accessClaims.confirmationJKT = dpop?.thumbprint
        if let target, !target.tokenClaims.isEmpty {
            accessClaims.extraClaims = Self.attributeClaims(
                try store.attributes(accountID: grant.accountID), for: target)
        }
        let opaque = target?.tokenFormat == .opaque ? oauth.tokens.next() : nil

        // The ID token's key, before anything is recorded: a client whose key is missing is
        // refused with nothing written.
        let idSigner = grant.scopes.contains(Scopes.openid) ? try signers.idToken.get() : nil

        // Refresh token, and the record of both.
        let refresh = RefreshTokenIssuance.decide(grant: grantType, client: client, scopes: grant.scopes)
        let refreshToken = refresh.issuesToken ? oauth.system.timeOrderedToken() : nil
        try store.recordIssued(
            IssuedTokens(
                grant: grant, refresh: refresh, refreshToken: refreshToken, accessTokenID: jti,
                accessExpiresAt: accessClaims.expiresAt, codeID: codeID,
                absoluteSeconds: oauth.settings.refreshTokenAbsoluteSeconds,
                idleSeconds: oauth.settings.refreshTokenIdleSeconds, accessScopes: accessScopes,
                accessAudience: target?.identifier,
                accessTokenDigest: opaque.map(OAuthStore.digest),
                accessDPoPJKT: dpop?.thumbprint))

        // ID token, without `at_hash` until the access token is signed.
        var idToken: (claims: IDTokenClaims, signer: JWSSigner)?
        if let idSigner {
            let idTokenClaims = grant.idTokenClaims
            let available = idTokenClaims.isEmpty ? [:] : try store.userClaims(accountID: grant.accountID)
            let claims = IDTokenClaims(
                issuer: oauth.issuer, subject: subject, audience: client.clientID,
                expiresAt: now.addingTimeInterval(Double(oauth.settings.idTokenLifetimeSeconds)),
                issuedAt: now, authTime: grant.authTime, nonce: nonce, acr: acr, amr: grant.amr,
                sessionID: grant.sessionID?.lowercased, accessTokenHash: nil,
                userClaims: IDTokenClaims.selecting(idTokenClaims, from: available))
            idToken = (claims, idSigner)
        }
        return UnsignedTokens(
            access: opaque.map(UnsignedTokens.Access.opaque) ?? .jwt(accessClaims),
            refreshToken: refreshToken,
            idToken: idToken, expiresIn: lifetime, scope: accessScopes, dpopBound: dpop != nil)
    }

    /// The `roles` and `groups` claims an API's configuration asks for.
    static func attributeClaims(_ attributes: AccountAttributes, for api: ProtectedResource) -> [String:
        JSONValue]
    {
        var claims: [String: JSONValue] = [:]
        for claim in api.tokenClaims {
            let values = claim == .roles ? attributes.roles : attributes.groups
            claims[claim.rawValue] = .array(values.map(JSONValue.string))
        }
        return claims
    }
}

/// The keys a grant signs with, taken from the key ring before the grant's transaction
/// opens: a ring that reloads reads the pool, which must not happen while the transaction
/// holds a connection.
struct TokenSigners {
    /// RS256: access tokens use the one algorithm every library verifies.
    var accessToken: JWSSigner
    /// The client's `id_token_signed_response_alg`; a missing key fails only a grant that
    /// issues an ID token.
    var idToken: Result<JWSSigner, any Error>

    init(oauth: OAuthServices, client: OAuthClient) throws {
        accessToken = try oauth.serverSigner()
        idToken = Result { try oauth.idTokenSigner(for: client) }
    }
}

/// What a grant issued and recorded, still to be signed: the signatures are made once the
/// grant's `COMMIT` is sent, and leave only if it succeeds (see `TokenFlow.issue`).
struct UnsignedTokens {
    enum Access {
        /// A JWT access token (RFC 9068), signed with the server's key.
        case jwt(AccessTokenClaims)
        /// An opaque access token (RFC 7662), already whole.
        case opaque(String)
    }

    var access: Access
    var refreshToken: String?
    /// The ID token's claims and the client's key for them.
    var idToken: (claims: IDTokenClaims, signer: JWSSigner)?
    var expiresIn: Int
    /// RFC 6749 §5.1: `scope` is the access token's.
    var scope: [String]
    /// A DPoP-bound access token is of type `DPoP` (RFC 9449 §5).
    var dpopBound: Bool

    /// Signs the access token, then the ID token with the access token's hash (Core §3.1.3.6).
    func signed(with signers: TokenSigners) throws -> TokenResponse {
        let accessToken: String
        switch access {
        case .jwt(let claims): accessToken = try claims.sign(with: signers.accessToken)
        case .opaque(let token): accessToken = token
        }
        var idTokenValue: String?
        if let idToken {
            var claims = idToken.claims
            claims.accessTokenHash = IDTokenClaims.accessTokenHash(
                accessToken, algorithm: idToken.signer.algorithm)
            idTokenValue = try claims.sign(with: idToken.signer)
        }
        var response = TokenResponse(
            accessToken: accessToken, expiresIn: expiresIn, refreshToken: refreshToken, idToken: idTokenValue,
            scope: scope)
        if dpopBound { response.tokenType = "DPoP" }
        return response
    }
}
