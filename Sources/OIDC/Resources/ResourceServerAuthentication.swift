import Foundation

/// A resource server's own credentials at the introspection endpoint (RFC 7662 §2.1: "the
/// endpoint MUST also require some form of authorization"). An API authenticates with the
/// `client_id` and secret configured under its `introspection`, by HTTP Basic or in the
/// form, like a client with `client_secret_basic` / `client_secret_post`.
public enum ResourceServerAuthentication {
    /// The API whose introspection credentials were presented, or nil when `presented` names
    /// no API (then it is a client, authenticated as usual).
    /// - Throws: `invalid_client` for a wrong secret or a method other than a secret.
    public static func authenticate(_ presented: PresentedClientCredentials, catalog: ResourceCatalog)
        throws(OAuthError) -> ProtectedResource?
    {
        guard let api = catalog.resource(introspectionClientID: presented.clientID),
            let credentials = api.introspection
        else { return nil }
        let challenge = presented.method == .clientSecretBasic ? ClientAuthentication.basicChallenge : nil
        switch presented {
        case .basic(_, let secret), .post(_, let secret):
            guard ClientSecret.verify(secret, against: credentials.clientSecretHash) else {
                throw OAuthError(
                    .invalidClient, hint: "The client is unknown or its credentials are wrong.",
                    debug: "resource server secret mismatch", wwwAuthenticate: challenge)
            }
            return api
        case .assertion, .none:
            throw OAuthError(
                .invalidClient, hint: "The client must authenticate with its registered method.",
                debug: "resource server without secret")
        }
    }
}
