import Crypto

/// The first request at the authorization challenge endpoint
/// (draft-ietf-oauth-first-party-apps §5.1): the authorization request of a first-party native
/// app that signs its user in without a browser. Checked in order, each step a refusal of its
/// own; the later requests of the sign-in (§5.3) are the server's own steps.
public struct AuthorizationChallengeRequest: Sendable, Equatable {
    public var clientID: String
    /// The S256 PKCE challenge the code is redeemed against (RFC 7636 §4.6).
    public var codeChallenge: String
    public var scopes: [String]
    /// The APIs the grant covers (RFC 8707).
    public var resources: [String]
    public var acrValues: [String]
    /// The redirect URI stored with the code: the token request names it (RFC 6749 §4.1.3).
    /// A registered redirect URI the app named, which the token request must then repeat
    /// (RFC 6749 §4.1.3); nil when it named none (§6: nothing is redirected).
    public var redirectURI: String?
    /// RFC 9449 §10: the JWK SHA-256 thumbprint of the app's DPoP key.
    public var dpopJKT: String?

    /// Step 1 (§4.1, §9.1): only a `first_party` client of `application_type` native, allowed
    /// the authorization code grant. A web client, even a first-party one, is refused: the
    /// draft's model is an app the operating system ties to the operator (§9.8 advises against
    /// browser-based apps).
    public static func checkClient(_ client: OAuthClient) throws(OAuthError) {
        guard client.firstParty, client.applicationType == .native else {
            throw OAuthError(
                .unauthorizedClient,
                hint: "The authorization challenge endpoint is only for first-party native apps.")
        }
        guard client.grantTypes.contains(.authorizationCode) else {
            throw OAuthError(
                .unauthorizedClient, hint: "The client may not use the authorization code grant.")
        }
    }

    /// Steps 1 to 7 for the first request of `client` (already authenticated).
    public static func validate(
        _ parameters: Parameters, client: OAuthClient, resources: ResourceCatalog = .empty
    ) throws(OAuthError) -> AuthorizationChallengeRequest {
        // Step 1.
        try checkClient(client)
        // Step 2. `response_type`: §5.1 makes it `code`; left out, it means the same.
        if let responseType = try parameters.value("response_type"), responseType != "code" {
            throw OAuthError(.unsupportedResponseType, hint: "The 'response_type' must be 'code'.")
        }
        // Step 3. PKCE S256, always (RFC 9700 §2.1.1): no redirect protects this code, the
        // verifier does.
        guard
            let challenge = try PKCE.validateChallenge(
                parameters.value("code_challenge"), method: parameters.value("code_challenge_method"),
                required: true)
        else { throw .invalidRequest("PKCE is required: the 'code_challenge' parameter is missing.") }
        // Step 4. Scope and APIs, as at the authorization endpoint (RFC 6749 §3.3, RFC 8707 §2).
        let (scopes, targets) = try AuthorizationRequest.checkScope(
            parameters, client: client, resources: resources)
        // Step 5. The redirect URI, optional: one the client registered (exact match).
        let redirectURI = try parameters.value("redirect_uri")
        if let redirectURI, !client.redirectURIs.contains(redirectURI) {
            throw .invalidRequest("The 'redirect_uri' is not registered for this client.")
        }
        // Step 6. `dpop_jkt` (RFC 9449 §10, draft §9.5.1), checked as at /authorize.
        let jkt = try AuthorizationRequest.checkDPoPJKT(parameters)
        // Step 7. `acr_values` (OpenID Connect Core §3.1.2.1), kept for the steps.
        return AuthorizationChallengeRequest(
            clientID: client.clientID, codeChallenge: challenge, scopes: scopes,
            resources: targets,
            acrValues: SpaceList.split(try parameters.value("acr_values")), redirectURI: redirectURI,
            dpopJKT: jkt)
    }
}
