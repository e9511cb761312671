import Foundation

extension AuthorizationRequest {
    /// The known parameters: each may appear at most once (RFC 6749 §3.1). Unknown
    /// parameters are ignored.
    static let knownParameters = [
        "client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce",
        "code_challenge", "code_challenge_method", "prompt", "max_age", "login_hint", "ui_locales", "claims",
        "request", "request_uri", "id_token_hint", "acr_values", "display",
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
    /// 5. No `request` / `request_uri` (request objects are not supported).
    /// 6. `response_type` is exactly `code`; the client may use the code grant.
    /// 7. `scope`: narrowed to known, allowed scopes; at least one must remain. `resource`
    ///    and API scopes: configured and allowed for the client, else refused.
    /// 8. PKCE: an S256 challenge (required for public clients and unless exempted).
    /// 9. `nonce`: required for OpenID requests without PKCE (RFC 9700 §2.1.1).
    /// 10. `prompt`, 11. `max_age`, 12. `claims`, then `login_hint`, `ui_locales`.
    ///
    /// - Parameters:
    ///   - client: the client registered under `clientID(in:)`, or nil when unknown.
    ///   - issuer: this server's issuer identifier, returned as `iss`.
    ///   - resources: the configured APIs, for `resource` (RFC 8707) and API scopes.
    public static func validate(
        _ parameters: Parameters, client: OAuthClient?, issuer: String, resources: ResourceCatalog = .empty
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
            // Step 4.
            try parameters.rejectDuplicates(of: knownParameters)
            // Step 5.
            try checkRequestObjects(parameters)
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
            if challenge == nil {
                guard scopes.contains(Scopes.openid) else {
                    throw OAuthError.invalidRequest(
                        "PKCE is required: the 'code_challenge' parameter is missing.")
                }
                guard nonce != nil else {
                    throw OAuthError.invalidRequest(
                        "The 'nonce' parameter is required when PKCE is not used.")
                }
            }
            // Steps 10 to 12.
            let prompt = try checkPrompt(parameters)
            let maxAge = try checkMaxAge(parameters)
            let claims = try checkClaims(parameters, scopes: scopes)
            var request = AuthorizationRequest(
                client: client, redirect: redirect, scopes: scopes, nonce: nonce, codeChallenge: challenge,
                prompt: prompt, maxAge: maxAge, loginHint: try parameters.value("login_hint"),
                uiLocales: SpaceList.split(try parameters.value("ui_locales")), idTokenClaims: claims)
            request.resources = targets
            return request
        } catch {
            throw AuthorizationFailure(error: error, redirect: redirect)
        }
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

    /// `claims` (Core §5.5) is honoured only for the ID token and only for profile and
    /// email claims whose scope was granted; other members are ignored.
    static func checkClaims(_ parameters: Parameters, scopes: [String]) throws(OAuthError) -> Set<String> {
        guard let value = try parameters.value("claims") else { return [] }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(value.utf8)) else {
            throw .invalidRequest("The 'claims' parameter must be a JSON object.")
        }
        guard let idToken = object["id_token"] else { return [] }
        guard let members = idToken.objectValue else {
            throw .invalidRequest("The 'claims' member 'id_token' must be a JSON object.")
        }
        var claims = Set<String>()
        for name in members.keys {
            if let scope = Scopes.scope(releasing: name), scopes.contains(scope) { claims.insert(name) }
        }
        return claims
    }
}
