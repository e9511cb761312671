import Foundation
import OIDC
import Synchronization

/// The public keys of a client: its configured `jwks`, or the JWK Set at its `jwks_uri`.
final class ClientKeyFetcher: Sendable {
    static let shared = ClientKeyFetcher()

    func keys(for client: OAuthClient, keyID: String?, settings: Configuration.OAuthSettings)
        throws(OAuthError)
        -> JWKS
    {
        if let jwks = client.jwks { return jwks }
        throw OAuthError(
            .invalidRequestObject, hint: "The client has no keys to verify the request object with.")
    }
}
