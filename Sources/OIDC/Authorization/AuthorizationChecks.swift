import Crypto
import Foundation

extension AuthorizationRequest {
    /// The known parameters: each may appear at most once (RFC 6749 §3.1). Unknown
    /// parameters are ignored.
    static let knownParameters = [
        "client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce",
        "code_challenge", "code_challenge_method", "prompt", "max_age", "login_hint", "ui_locales", "claims",
        "request", "request_uri", "id_token_hint", "acr_values", "display", "dpop_jkt",
    ]

    /// The `client_id`, for looking up the client before `validate`.
    /// - Throws: a failure without redirect when it is missing or duplicated.
    public static func clientID(in parameters: Parameters) throws(AuthorizationFailure) -> String {
        do {
            return try parameters.required("client_id")
        } catch {
            throw AuthorizationFailure(error: error, redirect: nil)
        }
    }

    /// Validates an authorization request (query of a GET or form body of a POST).
    ///
    /// The checks run in a fixed order. The first three decide whether errors may be
    /// redirected at all; every later error goes to the validated redirect URI with
    /// `state` and `iss`.
    /// 1. `client_id` present once, and the client known.
    /// 2. `redirect_uri` present once and registered (exact; loopback port for native).
    /// 3. `response_mode`: `query` (default) or, for web clients, `form_post`.
    /// 4. No other known parameter duplicated.
    /// 5. No `request` / `request_uri` (request objects are not supported); a pushed
    ///    request's `request_uri` was resolved before (`PushedAuthorizationRequest`). A client
    ///    that must push (its own setting, `pushedRequired`) is refused anything else; one that
    ///    must sign (`require_signed_request_object`) anything but a verified request object.
    /// 6. `response_type` is exactly `code`; the client may use the code grant.
    /// 7. `scope`: narrowed to known, allowed scopes; at least one must remain. `resource`
    ///    and API scopes: configured and allowed for the client, else refused.
    /// 8. PKCE: an S256 challenge (required for public clients and unless exempted).
    /// 9. Without PKCE (an exempt confidential client), only OpenID requests: their ID token
    ///    is what the client can bind to the request. `nonce` stays optional in the code flow
    ///    (Core §3.1.2.1); the risk of omitting both is documented in docs/security.md.
    /// 10. `prompt`, 11. `max_age`, 12. `claims` and `acr_values`, 13. `id_token_hint`, then
    ///     `login_hint`, `ui_locales`.
    ///
    /// - Parameters:
    ///   - client: the client registered under `clientID(in:)`, or nil when unknown.
    ///   - issuer: this server's issuer identifier, returned as `iss`.
    ///   - verifier: this server's signing keys, for `id_token_hint`; without it a hint is
    ///     refused.
    ///   - resources: the configured APIs, for `resource` (RFC 8707) and API scopes.
    ///   - pushed: the parameters were pushed to `/par` by the authenticated client (RFC 9126).
    ///   - pushedRequired: the server requires pushed requests of every client (RFC 9126 §5).
    ///   - signed: the parameters came from a verified request object (RFC 9101).
    public static func validate(
        _ parameters: Parameters, client: OAuthClient?, issuer: String, verifier: JWSVerifier? = nil,
        resources: ResourceCatalog = .empty, pushed: Bool = false, pushedRequired: Bool = false,
        signed: Bool = false
    ) throws(AuthorizationFailure) -> AuthorizationRequest {
        // Step 1.
        let clientID = try Self.clientID(in: parameters)
        guard let client, client.clientID == clientID else {
            throw AuthorizationFailure(
                error: OAuthError(.invalidClient, hint: "The client is not registered.", status: 400),
                redirect: nil)
        }
        // Step 2.
        let redirectURI: String
        do {
            redirectURI = try checkRedirectURI(parameters, client: client)
        } catch {
            throw AuthorizationFailure(error: error, redirect: nil)
        }
        // From here on errors are redirected. A duplicated `state` cannot be echoed.
        let state = try? parameters.value("state")
        var redirect = AuthorizationRedirect(
            redirectURI: redirectURI, responseMode: .query, state: state, issuer: issuer)
        do throws(OAuthError) {
            // Step 3.
            redirect.responseMode = try checkResponseMode(parameters, client: client)
            if try parameters.value("response_mode") == nil, let object = try parameters.value("request") {
                redirect.responseMode = requestObjectResponseMode(object, client: client)
            }
            // Step 4.
            try parameters.rejectDuplicates(of: knownParameters)
            // Step 5.
            try checkRequestObjects(parameters)
            try checkPushed(pushed, client: client, required: pushedRequired)
            try checkSigned(signed, client: client)
            // Step 6.
            try checkResponseType(parameters, client: client)
            // Step 7.
            let (scopes, targets) = try checkScope(parameters, client: client, resources: resources)
            // Step 8.
            let challenge = try PKCE.validateChallenge(
                parameters.value("code_challenge"), method: parameters.value("code_challenge_method"),
                required: client.pkceRequired)
            // Step 9.
            let nonce = try parameters.value("nonce")
            if challenge == nil && !scopes.contains(Scopes.openid) {
                throw OAuthError.invalidRequest(
                    "PKCE is required: the 'code_challenge' parameter is missing.")
            }
            // Steps 10 to 13.
            let prompt = try checkPrompt(parameters)
            let maxAge = try checkMaxAge(parameters)
            let claims = try checkClaims(parameters)
            let acr = AuthenticationContextRequest.from(
                acrValues: SpaceList.split(try parameters.value("acr_values")), claims: claims)
            let hintSubject = try checkIDTokenHint(
                parameters, client: client, issuer: issuer, verifier: verifier)
            var request = AuthorizationRequest(
                client: client, redirect: redirect, scopes: scopes, nonce: nonce, codeChallenge: challenge,
                prompt: prompt, maxAge: maxAge, loginHint: try parameters.value("login_hint"),
                uiLocales: SpaceList.split(try parameters.value("ui_locales")), claims: claims,
                idTokenClaims: ClaimsRequest.releasable(claims.idToken, for: client),
                userinfoClaims: ClaimsRequest.releasable(claims.userinfo, for: client), acr: acr,
                idTokenHintSubject: hintSubject)
            request.resources = targets
            request.dpopJKT = try checkDPoPJKT(parameters)
            return request
        } catch {
            throw AuthorizationFailure(error: error, redirect: redirect)
        }
    }

    /// `dpop_jkt` (RFC 9449 §10): the SHA-256 thumbprint of the key the code is bound to,
    /// 43 base64url characters.
    static func checkDPoPJKT(_ parameters: Parameters) throws(OAuthError) -> String? {
        guard let jkt = try parameters.value("dpop_jkt") else { return nil }
        guard jkt.utf8.count == 43,
            jkt.utf8.allSatisfy({
                FormEncoding.isUnreserved($0) && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "~")
            })
        else {
            throw OAuthError.invalidRequest("The 'dpop_jkt' parameter is not a JWK SHA-256 thumbprint.")
        }
        return jkt
    }

    static func checkRedirectURI(_ parameters: Parameters, client: OAuthClient) throws(OAuthError) -> String {
        // Always required: with several registered URIs it is ambiguous, and OpenID Connect
        // requires it anyway (Core §3.1.2.1).
        guard let uri = try parameters.value("redirect_uri") else {
            throw OAuthError.invalidRequest("The 'redirect_uri' parameter is missing.").notRedirectable()
        }
        guard RedirectURIMatching.matches(uri, client: client) else {
            throw OAuthError.invalidRequest(
                "The 'redirect_uri' is not registered for this client.", debug: "redirect_uri mismatch"
            ).notRedirectable()
        }
        return uri
    }

    static func checkResponseMode(_ parameters: Parameters, client: OAuthClient) throws(OAuthError)
        -> ResponseMode
    {
        guard let value = try parameters.value("response_mode") else { return .query }
        switch value {
        case "query": return .query
        case "form_post":
            guard client.applicationType == .web else {
                throw .invalidRequest("The 'form_post' response mode is only available to web clients.")
            }
            return .formPost
        case "fragment":
            throw .invalidRequest("The 'fragment' response mode is not allowed; use 'query' or 'form_post'.")
        default:
            throw .invalidRequest("The 'response_mode' is not supported; use 'query' or 'form_post'.")
        }
    }

    /// The response mode a request object asks for, used only to deliver its refusal
    /// (`request_not_supported`, step 5) the way the client expects: a request object may carry
    /// `response_mode` alone (Core §6.1), and a `form_post` client waits for a POST. Nothing
    /// else of the unverified object is read; anything unusable means the default, `query`.
    static func requestObjectResponseMode(_ object: String, client: OAuthClient) -> ResponseMode {
        let parts = object.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[1].utf8.count <= 16_384,
            let payload = try? Base64URL.decode(String(parts[1])),
            let claims = try? JSONValue.parse(Data(payload)).objectValue,
            claims["response_mode"]?.stringValue == "form_post", client.applicationType == .web
        else { return .query }
        return .formPost
    }

    static func checkRequestObjects(_ parameters: Parameters) throws(OAuthError) {
        if try parameters.value("request") != nil {
            throw OAuthError(
                .requestNotSupported, hint: "Send the parameters directly instead of a request object.")
        }
        if try parameters.value("request_uri") != nil {
            throw OAuthError(
                .requestURINotSupported, hint: "Send the parameters directly instead of a request URI.")
        }
    }

    /// RFC 9126 §5 / §6: with `require_pushed_authorization_requests` (the client's or the
    /// server's), an authorization request must reference a pushed one.
    static func checkPushed(_ pushed: Bool, client: OAuthClient, required: Bool) throws(OAuthError) {
        // FAPI 2.0 Security Profile §5.3.2.2: a fapi2 client's requests are pushed, always.
        guard !pushed, required || client.requirePushedAuthorizationRequests || client.profile == .fapi2
        else {
            return
        }
        throw .invalidRequest(
            "This client must push its authorization requests to the pushed authorization request endpoint.")
    }

    /// RFC 9101 §10.5 (`require_signed_request_object`): the request must have come in a
    /// signed request object, at /authorize or in the pushed body.
    static func checkSigned(_ signed: Bool, client: OAuthClient) throws(OAuthError) {
        guard !signed, client.requireSignedRequestObject else { return }
        throw .invalidRequest("This client must send its authorization requests as signed request objects.")
    }

    /// Where a refusal of these parameters may go: the validated redirect URI of `client` with
    /// the request's `state`, or nowhere (an error page) when either cannot be trusted. Used for
    /// refusals that happen before `validate` (an unusable `request_uri`).
    public static func failure(
        _ error: OAuthError, parameters: Parameters, client: OAuthClient?, issuer: String
    ) -> AuthorizationFailure {
        guard let client, (try? clientID(in: parameters)) == client.clientID,
            let redirectURI = try? checkRedirectURI(parameters, client: client)
        else { return AuthorizationFailure(error: error, redirect: nil) }
        let mode = (try? checkResponseMode(parameters, client: client)) ?? .query
        return AuthorizationFailure(
            error: error,
            redirect: AuthorizationRedirect(
                redirectURI: redirectURI, responseMode: mode, state: try? parameters.value("state"),
                issuer: issuer))
    }

    static func checkResponseType(_ parameters: Parameters, client: OAuthClient) throws(OAuthError) {
        guard let value = try parameters.value("response_type") else {
            throw .invalidRequest("The 'response_type' parameter is missing.")
        }
        guard value == "code" else {
            throw OAuthError(.unsupportedResponseType, hint: "Only the 'code' response type is supported.")
        }
        guard client.grantTypes.contains(.authorizationCode) else {
            throw OAuthError(
                .unauthorizedClient, hint: "The client may not use the authorization code grant.")
        }
    }

    /// The scopes to grant and the APIs they are for: `resource` values and API scopes are
    /// checked strictly (`ResourceCatalog.select`), the other scopes narrowed as before.
    static func checkScope(_ parameters: Parameters, client: OAuthClient, resources: ResourceCatalog = .empty)
        throws(OAuthError) -> (scopes: [String], resources: [String])
    {
        guard let value = try parameters.value("scope") else {
            throw .invalidScope("The 'scope' parameter is missing.")
        }
        let selection = try resources.select(
            resources: parameters.values("resource"), scopes: SpaceList.split(value),
            clientID: client.clientID)
        let granted = Scopes.narrow(selection.otherScopes, for: client) + selection.apiScopes
        guard !granted.isEmpty else {
            throw .invalidScope("None of the requested scopes is available to this client.")
        }
        return (granted, selection.resources)
    }

    static func checkPrompt(_ parameters: Parameters) throws(OAuthError) -> Set<Prompt> {
        var prompts = Set<Prompt>()
        for value in SpaceList.split(try parameters.value("prompt")) {
            guard let prompt = Prompt(rawValue: value) else {
                throw .invalidRequest(
                    "A 'prompt' value is not supported.", debug: "prompt=\(value.prefix(32))")
            }
            prompts.insert(prompt)
        }
        if prompts.contains(.none) && prompts.count > 1 {
            throw .invalidRequest("The 'prompt' value 'none' cannot be combined with other values.")
        }
        return prompts
    }

    static func checkMaxAge(_ parameters: Parameters) throws(OAuthError) -> Int? {
        guard let value = try parameters.value("max_age") else { return nil }
        guard value.utf8.count <= 10, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Int(value)
        else {
            throw .invalidRequest("The 'max_age' parameter must be a non-negative integer.")
        }
        return seconds
    }

    /// `claims` (Core §5.5): parsed and checked by `ClaimsRequest`.
    static func checkClaims(_ parameters: Parameters) throws(OAuthError) -> ClaimsRequest {
        guard let value = try parameters.value("claims") else { return ClaimsRequest() }
        return try ClaimsRequest.parse(value)
    }

    /// `id_token_hint` (Core §3.1.2.1): an ID token this server issued (signature, `typ`,
    /// `iss`, as at logout; it may have expired) whose `aud` contains the requesting client.
    /// Returns its subject; anything else is `invalid_request`.
    static func checkIDTokenHint(
        _ parameters: Parameters, client: OAuthClient, issuer: String, verifier: JWSVerifier?
    ) throws(OAuthError) -> String? {
        guard let token = try parameters.value("id_token_hint") else { return nil }
        let invalid = OAuthError.invalidRequest(
            "The 'id_token_hint' is not a valid ID token for this client.")
        guard let verifier else { throw invalid }
        let claims: JWTRegisteredClaims
        do {
            (claims, _, _) = try LogoutRequest.verifyHint(
                token, verifier: verifier, issuer: issuer, client: { _ in client })
        } catch {
            throw invalid
        }
        guard claims.audience.contains(client.clientID), let subject = claims.subject else { throw invalid }
        return subject
    }
}
