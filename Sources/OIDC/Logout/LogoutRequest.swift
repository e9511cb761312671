import Foundation

/// The outcome of a valid RP-initiated logout request (OpenID Connect RP-Initiated
/// Logout 1.0 §2, §3).
public struct LogoutDecision: Sendable, Equatable {
    /// Ask the user before ending the session: no valid `id_token_hint`, or the hint's
    /// `sub`/`sid` is not the current session's (someone else's link could otherwise sign
    /// the user out). False when no one is signed in: there is nothing to end.
    public var requiresConfirmation: Bool
    /// Where to send the browser afterwards, `state` already appended; nil means show the
    /// "signed out" page instead.
    public var postLogoutRedirect: String?
    /// The client the request came from (from `client_id` or the hint's audience).
    public var client: OAuthClient?
    public var hintSubject: String?
    public var hintSessionID: String?
    public var uiLocales: [String]
    /// An `id_token_hint` was sent but is not an ID token this server issued to a
    /// registered client. It is ignored: the user is asked, and never redirected.
    public var hintRejected = false

    /// Whether a valid hint names `session`: its `sub`, and its `sid` when the hint has one.
    public func names(_ session: BrowserSession) -> Bool {
        guard let hintSubject, !hintRejected else { return false }
        return hintSubject == session.accountID && (hintSessionID == nil || hintSessionID == session.sessionID)
    }
}

public enum LogoutRequest {
    static let knownParameters = [
        "id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales", "logout_hint",
    ]

    /// Validates the request (query of a GET or form body of a POST). Errors are never
    /// redirected: without a validated URI there is nowhere safe to send them.
    ///
    /// 1. No known parameter duplicated.
    /// 2. `id_token_hint`: an ID token (`typ` `JWT`, so never an access token or a logout
    ///    token) signed by this server's keys (`verifier`), `iss` is `issuer`, and its client
    ///    (the single `aud`, or `azp`) is registered; an expired hint is accepted (§2: the RP
    ///    may hold an old ID token). Any other hint is ignored and rejected (`hintRejected`):
    ///    the user is asked, and the browser is not sent to any `post_logout_redirect_uri`
    ///    (§4: no redirect after a failed validation).
    /// 3. `client_id`, when sent with a hint, must be among the hint's audiences.
    /// 4. `post_logout_redirect_uri` needs a client identified by 2 or 3 and must be one of
    ///    its registered post-logout URIs, compared exactly.
    /// - Parameter client: finds a registered client by id.
    public static func validate(
        _ parameters: Parameters, verifier: JWSVerifier, issuer: String, session: BrowserSession?,
        client lookUp: (String) -> OAuthClient?
    ) throws(OAuthError) -> LogoutDecision {
        do throws(OAuthError) {
            // Step 1.
            try parameters.rejectDuplicates(of: knownParameters)
            // Step 2.
            var hint: JWTRegisteredClaims?
            var hintSessionID: String?
            var hintClientID: String?
            var hintRejected = false
            if let token = try parameters.value("id_token_hint") {
                do throws(OAuthError) {
                    (hint, hintSessionID, hintClientID) = try verifyHint(
                        token, verifier: verifier, issuer: issuer, client: lookUp)
                } catch {
                    hintRejected = true
                }
            }
            // Step 3.
            let clientID = try parameters.value("client_id")
            if let clientID, let hint, !hint.audience.contains(clientID) {
                throw OAuthError.invalidRequest(
                    "The 'client_id' does not match the audience of the 'id_token_hint'.")
            }
            var client: OAuthClient?
            if let id = clientID ?? hintClientID {
                client = lookUp(id)
                if clientID != nil && client == nil {
                    throw OAuthError.invalidRequest("The client is not registered.")
                }
            }
            // Step 4.
            var redirect: String?
            if !hintRejected, let uri = try parameters.value("post_logout_redirect_uri") {
                guard let client else {
                    throw OAuthError.invalidRequest(
                        "The 'post_logout_redirect_uri' requires an 'id_token_hint' or 'client_id'.")
                }
                guard client.postLogoutRedirectURIs.contains(uri) else {
                    throw OAuthError.invalidRequest(
                        "The 'post_logout_redirect_uri' is not registered for this client.")
                }
                let state = try parameters.value("state")
                redirect = state.map { AuthorizationRedirect.appendingQuery([("state", $0)], to: uri) } ?? uri
            }
            var decision = LogoutDecision(
                requiresConfirmation: false, postLogoutRedirect: redirect, client: client,
                hintSubject: hint?.subject,
                hintSessionID: hintSessionID, uiLocales: SpaceList.split(try parameters.value("ui_locales")),
                hintRejected: hintRejected)
            if let session { decision.requiresConfirmation = !decision.names(session) }
            return decision
        } catch {
            throw error.notRedirectable()
        }
    }

    static func verifyHint(
        _ token: String, verifier: JWSVerifier, issuer: String, client lookUp: (String) -> OAuthClient?
    ) throws(OAuthError) -> (JWTRegisteredClaims, sid: String?, client: String?) {
        let invalid = "The 'id_token_hint' is not a valid ID token from this server."
        do {
            // `typ` JWT: the access tokens (`at+jwt`) and logout tokens (`logout+jwt`) this
            // server signs with the same keys are not ID tokens.
            let verified = try verifier.verify(token, expectedType: "JWT")
            let claims = try JWTClaimsValidator.parse(verified.payload)
            guard claims.issuer == issuer else { throw JOSEError.issuerMismatch }
            guard claims.subject != nil, !claims.audience.isEmpty else {
                throw JOSEError.missingClaim("sub/aud")
            }
            let raw = try verified.decodePayload(as: [String: JSONValue].self)
            // The client is the single audience, or `azp` when there are several (Core §2).
            let client = claims.audience.count == 1 ? claims.audience.first : raw["azp"]?.stringValue
            guard let client, lookUp(client) != nil else { throw JOSEError.audienceMismatch }
            return (claims, raw["sid"]?.stringValue, client)
        } catch {
            throw OAuthError.invalidRequest(invalid, debug: "id_token_hint: \(error)")
        }
    }
}
