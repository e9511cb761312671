import Foundation
import OIDC
import Postgres

/// Verifies the signed request objects of /authorize and /par (RFC 9101) with the client's
/// keys: its `jwks`, or the set at its `jwks_uri` (`ClientKeyFetcher`, cached, fetched again
/// once for an unknown `kid`).
struct RequestObjects {
    let oauth: OAuthServices

    /// The verified object; `invalid_request_object` (or `server_error`-free refusals only)
    /// when the signature, the keys or a claim does not check out.
    func verify(_ object: String, client: OAuthClient) throws(OAuthError) -> RequestObject.Verified {
        let keyID = RequestObject.header(of: object)?.keyID
        let keys = try ClientKeyFetcher.shared.keys(for: client, keyID: keyID, settings: oauth.settings)
        return try RequestObject.verify(
            object, client: client, keys: keys, issuer: oauth.issuer, now: oauth.system.now())
    }

    /// Records a request object's `jti` (RFC 9101 §10.1: replay); false when it was seen before
    /// and has not expired.
    static func recordID(clientID: String, jti: String, expiresAt: Date, on db: some SQLExecutor) throws
        -> Bool
    {
        try db.query(
            """
            INSERT INTO request_object_ids (client_id, jti, expires_at)
            VALUES (\(clientID), \(jti), \(expiresAt))
            ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE request_object_ids.expires_at < now()
            RETURNING jti
            """
        ).first != nil
    }
}
