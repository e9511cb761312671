import Foundation
import HTTPServer
import OIDC

/// Client authentication for /token, /revoke and /introspect: extract, look up,
/// authenticate, and record a `private_key_jwt` assertion id so it works only once.
struct ClientAuthenticator {
    let oauth: OAuthServices
    let assertions: any ClientAssertionStore

    func authenticate(_ request: HTTPRequest, parameters: Parameters) throws -> AuthenticatedClient {
        let presented = try ClientAuthentication.extract(
            authorization: request.headers["Authorization"], parameters: parameters)
        var client = oauth.clients.client(presented.clientID)
        // A `private_key_jwt` client with a `jwks_uri`: its keys as fetched (and cached).
        if case .assertion(_, let jwt) = presented, let known = client, known.jwks == nil,
            known.jwksURI != nil
        {
            client?.jwks = try? ClientKeyFetcher.shared.keys(
                for: known, keyID: RequestObject.header(of: jwt)?.keyID, settings: oauth.settings)
        }
        let authenticated = try ClientAuthentication.authenticate(
            presented, client: client,
            audiences: FAPI2Profile.assertionAudiences(
                for: client, issuer: oauth.issuer, accepted: oauth.discovery.clientAssertionAudiences),
            now: oauth.system.now())
        // RFC 7523 §3 item 7: an assertion's `jti` is accepted once, while it can be accepted.
        if let jti = authenticated.assertionID, let expiresAt = authenticated.assertionExpiresAt {
            guard
                try assertions.recordAssertion(
                    clientID: authenticated.client.clientID, jti: jti,
                    acceptableUntil: expiresAt.addingTimeInterval(ClientAuthentication.assertionLeeway))
            else {
                throw OAuthError(
                    .invalidClient, hint: "The client assertion was already used.",
                    debug: "assertion jti replay")
            }
        }
        return authenticated
    }
}
