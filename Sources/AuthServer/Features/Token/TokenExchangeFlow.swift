import Foundation
import OIDC

extension TokenFlow {
    /// RFC 8693 token exchange of a Sign in with Apple identityToken from a native app.
    func tokenExchange(
        _ request: TokenExchangeRequest, client: OAuthClient, clientAddress: String, resources: [String],
        dpop: DPoPProof?
    ) throws -> TokenResponse {
        throw OAuthError(.unsupportedGrantType, hint: "Sign in with Apple is not configured on this server.")
    }
}
