import Foundation
import OIDC

/// RFC 8693 token exchange at `/token`: a native app that signed in with Apple
/// (AuthenticationServices) trades the `identityToken` for this server's own tokens, so it
/// then talks only to this server. The token is checked as Apple requires of a server
/// (signature with Apple's keys, `iss`, `aud` the app's bundle id, `exp`), the nonce by
/// Apple's rule (`AppleNonce`), and the `authorizationCode` that came with it is redeemed at
/// Apple: Apple accepts it once, so a captured token and code cannot be exchanged twice, and
/// its refresh token is kept (sealed) for revocation when the account is deleted.
/// Linking follows `UpstreamAccounts.decide`, except that this path never links to an
/// existing account: proving control of one needs the web pages.
extension TokenFlow {
    /// The methods a sign-in through an upstream provider claims (`fed`: federated; not an
    /// RFC 8176 value, documented in docs/api.md).
    static let upstreamAMR = ["fed"]

    func tokenExchange(
        _ request: TokenExchangeRequest, client: OAuthClient, clientAddress: String, resources: [String],
        dpop: DPoPProof?
    ) throws -> TokenResponse {
        do {
            return try runTokenExchange(
                request, client: client, clientAddress: clientAddress, resources: resources, dpop: dpop)
        } catch let error as OAuthError {
            oauth.metrics.increment("auth_token_exchange_refusals_total", ["error": error.code.rawValue])
            oauth.log.info(
                "token.exchange",
                [
                    "client_id": client.clientID, "event": "refused", "error": error.code.rawValue,
                    "hint": error.hint,
                ])
            throw error
        }
    }

    private func runTokenExchange(
        _ request: TokenExchangeRequest, client: OAuthClient, clientAddress: String, resources: [String],
        dpop: DPoPProof?
    ) throws -> TokenResponse {
        // 1. Sign in with Apple is configured, and the client's apps are apps of its team.
        guard let provider = oauth.configuration.appleProvider, let apple = provider.apple else {
            throw OAuthError(
                .unsupportedGrantType, hint: "Sign in with Apple is not configured on this server.")
        }
        let audiences = client.appleAppIDs.compactMap {
            AppleAppAudience.bundleID(of: $0, teamID: apple.teamID)
        }
        .filter(apple.bundleIDs.contains)
        guard !audiences.isEmpty else {
            throw OAuthError(
                .unauthorizedClient, hint: "None of the client's apps is an app of the configured Apple team."
            )
        }
        let now = oauth.system.now()

        // 2. The identityToken: Apple's signature, iss, aud one of the client's apps, exp, iat,
        // and the nonce: the token carries SHA-256(raw nonce) as the app asked Apple to put it.
        let identity = try verifyApple(
            request.subjectToken, provider: provider, audiences: Set(audiences),
            nonce: AppleNonce.hashed(request.appleNonce), now: now)
        guard
            let bundleID = AppleAppAudience.matching(
                audience: identity.audience, clientAppIDs: client.appleAppIDs, teamID: apple.teamID,
                providerBundleIDs: apple.bundleIDs)
        else {
            throw OAuthError(.invalidGrant, hint: "The identity token was issued to another app.")
        }

        // 3. The authorizationCode, redeemed at Apple for the same app; its ID token must name
        // the same user. Apple refuses a used code: a replayed exchange ends here.
        let tokens: AppleClient.Tokens
        do {
            tokens = try AppleClient.shared.exchange(
                code: request.appleAuthorizationCode, clientID: bundleID, redirectURI: nil,
                provider: provider,
                now: now)
        } catch .refused("invalid_client") {
            // Apple does not accept this server's client secret: a configuration problem
            // (team, key id or key), not the app's.
            oauth.log.error(
                "token.exchange", ["step": "apple.code", "event": "refused", "reason": "invalid_client"])
            throw OAuthError(
                .serverError, hint: "Sign in with Apple refused this server's credentials.",
                debug: "apple invalid_client")
        } catch .refused(let error) {
            oauth.log.info("token.exchange", ["step": "apple.code", "event": "refused", "reason": error])
            throw OAuthError(
                .invalidGrant,
                hint:
                    "Apple refused the authorization code: it is used, expired or was issued to another app.")
        } catch .unavailable(let detail) {
            oauth.log.warning("token.exchange", ["step": "apple.code", "event": "failed", "reason": detail])
            throw OAuthError(
                .temporarilyUnavailable, hint: "Sign in with Apple could not be reached. Try again.")
        }
        let fromCode = try verifyApple(
            tokens.idToken, provider: provider, audiences: [bundleID], nonce: nil, now: now)
        guard fromCode.subject == identity.subject else {
            throw OAuthError(.invalidGrant, hint: "The authorization code belongs to another Apple user.")
        }

        // 4. Scope: what the client may have; the API the access token is for.
        let scopes = Scopes.narrow(request.scope, for: client)
        let catalog = oauth.resources
        let target = try catalog.target(requested: resources, granted: resources, clientID: client.clientID)
        let claims = UpstreamClaims(
            provider: provider.id, issuer: UpstreamProvider.appleIssuer, subject: identity.subject,
            email: identity.email, emailVerified: identity.emailVerified,
            isPrivateEmail: identity.isPrivateEmail,
            name: identity.name)

        // 5. In one transaction: the account (linked, or new), Apple's refresh token sealed for
        // revocation, the audit event, and our tokens. A new account that races another
        // sign-in of the same identity decides again once.
        let signers = try TokenSigners(oauth: oauth, client: client)
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try issueForApple(
                    claims, appleRefreshToken: tokens.refreshToken, bundleID: bundleID, scopes: scopes,
                    resources: resources, target: target, catalog: catalog, client: client,
                    clientAddress: clientAddress, signers: signers, dpop: dpop)
            } catch UpstreamAccounts.CreateError.conflict where attempt == 1 {
                continue
            }
        }
    }

    private enum ExchangeOutcome {
        case issued(UnsignedTokens)
        case refused(OAuthError)
    }

    private func issueForApple(
        _ claims: UpstreamClaims, appleRefreshToken: String?, bundleID: String, scopes: [String],
        resources: [String], target: ProtectedResource?, catalog: ResourceCatalog, client: OAuthClient,
        clientAddress: String, signers: TokenSigners, dpop: DPoPProof?
    ) throws -> TokenResponse {
        let outcome: ExchangeOutcome = try oauth.pool.transaction { connection in
            let store = PostgresTokenStore(db: connection)
            // 5a. A DPoP proof is used once (RFC 9449 §11.1).
            if let dpop, try !store.recordDPoPProof(dpop) {
                return .refused(DPoPProofs.replayed(at: .authorizationServer))
            }
            let now = try TokenExchangeStore.now(on: connection)
            let accountID: UUID
            let identityID: UUID
            var created = false
            switch try UpstreamAccounts.decide(claims, on: connection) {
            case .signIn(let account, let identity):
                guard try !TokenExchangeStore.accountDisabled(account, on: connection) else {
                    return .refused(OAuthError(.invalidGrant, hint: "The account is disabled."))
                }
                try UpstreamIdentityStore.touch(
                    id: identity, email: claims.email, emailVerified: claims.emailVerified,
                    isPrivateEmail: claims.isPrivateEmail, at: now, on: connection)
                (accountID, identityID) = (account, identity)
            case .proveControl(let account):
                // Never link on this path: the owner of the account with this verified address
                // must sign in to it on the web and link Apple there. Apple's refresh token of the
                // code just redeemed is revoked at Apple: nothing here will hold it.
                if let appleRefreshToken {
                    let sealingID = oauth.system.uuid()
                    try UpstreamTokenRevocations.queue(
                        sealed: try oauth.signingKeys.sealUpstreamToken(
                            appleRefreshToken, identityID: sealingID),
                        identityID: sealingID, clientID: bundleID, id: oauth.system.timeOrderedUUID(),
                        on: connection)
                }
                try AuditLog.record(
                    AuditEvent(
                        kind: .signInFailed, actor: .user, accountID: account, clientID: client.clientID,
                        clientAddress: clientAddress,
                        detail: ["method": "apple_token_exchange", "reason": "link_requires_sign_in"]),
                    on: connection)
                return .refused(
                    OAuthError(
                        .invalidGrant,
                        hint:
                            "An account with this email address exists. Sign in to it on the web and link Apple on the account page, then try again."
                    ))
            case .create:
                (accountID, identityID) = try UpstreamAccounts.createAccount(
                    claims, userHandle: oauth.system.randomBytes(32), at: now, on: connection)
                created = true
                try AuditLog.record(
                    AuditEvent(
                        kind: .accountCreated, actor: .user, accountID: accountID, clientID: client.clientID,
                        clientAddress: clientAddress, detail: ["method": "apple"]),
                    on: connection)
            }
            // Apple's newest refresh token replaces the one kept: any one of them revokes the
            // user's authorization when the account goes. The previous one is NOT revoked now:
            // revoking a token at Apple ends the user's authorization of the app (and Apple then
            // sends consent-revoked), which a routine sign-in must never do.
            if let appleRefreshToken {
                let sealed = try oauth.signingKeys.sealUpstreamToken(
                    appleRefreshToken, identityID: identityID)
                try UpstreamIdentityStore.setRefreshToken(
                    id: identityID, ciphertext: sealed, clientID: bundleID, on: connection)
            }
            try AuditLog.record(
                AuditEvent(
                    kind: .signInSucceeded, actor: .user, accountID: accountID, clientID: client.clientID,
                    clientAddress: clientAddress,
                    detail: ["method": "apple_token_exchange", "new_account": created ? "true" : "false"]),
                on: connection)
            var grant = RefreshGrant(
                familyID: oauth.system.timeOrderedUUID(), clientID: client.clientID, accountID: accountID,
                sessionID: nil,
                scopes: scopes, authTime: now, amr: Self.upstreamAMR)
            grant.resources = resources
            grant.dpopJKT = DPoPPolicy.bindsRefreshToken(for: client) ? dpop?.thumbprint : nil
            return .issued(
                try issue(
                    grant, client: client, grantType: .tokenExchange, nonce: nil, codeID: nil, now: now,
                    signers: signers, store: store, target: target, catalog: catalog, dpop: dpop))
        }
        switch outcome {
        case .issued(let tokens):
            // Signed after the commit (see `TokenFlow.issue`).
            var response = try tokens.signed(with: signers)
            response.issuedTokenType = TokenExchangeRequest.accessTokenType
            oauth.metrics.increment("auth_tokens_issued_total", ["grant_type": "token_exchange"])
            return response
        case .refused(let error):
            throw error
        }
    }

    /// An Apple ID token verified with Apple's keys (fetched, and fetched again for an unknown
    /// `kid` at most every few seconds); each refusal becomes `invalid_grant` naming the check.
    private func verifyApple(
        _ token: String, provider: UpstreamProvider, audiences: Set<String>, nonce: String?, now: Date
    ) throws -> UpstreamIDToken {
        guard let apple = provider.apple else {
            throw OAuthError(.invalidGrant, hint: "Apple is not configured.")
        }
        let keys: JWKS
        do {
            keys = try ClientKeyFetcher.shared.keys(
                at: apple.endpoints.keys, keyID: UpstreamIDTokenVerifier.keyID(of: token),
                fetch: provider.fetch)
        } catch {
            oauth.log.warning(
                "token.exchange", ["step": "apple.keys", "event": "failed", "reason": "\(error)"])
            throw OAuthError(.temporarilyUnavailable, hint: "Apple's keys could not be fetched. Try again.")
        }
        do {
            return try UpstreamIDTokenVerifier(
                issuer: UpstreamProvider.appleIssuer, audiences: audiences, keys: keys, algorithms: [.RS256]
            ).verify(token, nonce: nonce, now: now)
        } catch {
            throw OAuthError(.invalidGrant, hint: Self.describe(error), debug: "\(error)")
        }
    }

    static func describe(_ error: UpstreamIDTokenError) -> String {
        switch error {
        case .malformed: return "The identity token is not a valid JWT."
        case .unknownKey: return "The identity token is signed with a key Apple does not publish."
        case .signature: return "The identity token's signature is not Apple's."
        case .issuer: return "The identity token was not issued by Apple."
        case .audience: return "The identity token was issued to another app."
        case .expired: return "The identity token has expired."
        case .issuedInFuture: return "The identity token is issued in the future."
        case .subject: return "The identity token has no valid subject."
        case .nonce: return "The identity token's nonce is not the SHA-256 of 'apple_nonce'."
        }
    }
}
