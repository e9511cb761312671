import Foundation
import OIDC
import Postgres

/// Verifies the signed request objects of /authorize and /par (RFC 9101) with the client's
/// keys: its `jwks`, or the set at its `jwks_uri` (`ClientKeyFetcher`, cached, fetched again
/// once for an unknown `kid`).
struct RequestObjects {
    let oauth: OAuthServices

    /// The verified object; `invalid_request_object` when the keys cannot be had or the
    /// signature or a claim does not check out.
    func verify(_ object: String, client: OAuthClient) throws(OAuthError) -> RequestObject.Verified {
        let keyID = RequestObject.header(of: object)?.keyID
        let keys: JWKS
        do throws(ClientKeyFetcher.Failure) {
            keys = try ClientKeyFetcher.shared.keys(for: client, keyID: keyID, settings: oauth.settings)
        } catch {
            switch error {
            case .noKeys:
                throw OAuthError(
                    .invalidRequestObject, hint: "The client has no keys to verify the request object with.")
            case .fetch(let reason):
                oauth.log.warning(
                    "authorize.jwks_uri",
                    ["client_id": client.clientID, "reason": String(describing: reason)])
                throw OAuthError(
                    .invalidRequestObject, hint: "The client's keys could not be fetched from its jwks_uri.")
            }
        }
        return try RequestObject.verify(
            object, client: client, keys: keys, issuer: oauth.issuer, now: oauth.system.now())
    }

    /// Records a request object's `jti` (RFC 9101 §10.1: replay); false when it was seen before
    /// and could still be accepted. The record lasts while any check could accept the object:
    /// until its `exp` with the leeway the check allows, and `OAuthStore.replayMargin` more
    /// (as the purge keeps it) for instances whose clocks differ from PostgreSQL's.
    static func recordID(clientID: String, jti: String, expiresAt: Date, on db: some SQLExecutor) throws
        -> Bool
    {
        try OAuthStore.recordOnce(
            .requestObjects, clientID: clientID, jti: jti,
            acceptableUntil: expiresAt.addingTimeInterval(RequestObject.leeway), on: db)
    }
}
