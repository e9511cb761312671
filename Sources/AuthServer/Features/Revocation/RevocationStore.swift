import Foundation
import OIDC
import Postgres

/// What revocation reads and writes: access-token records and refresh-token families.
protocol RevocationStore {
    func revokeAccessToken(jti: String, clientID: String) throws
    /// Revokes a client's own JWT, which has no record until then (`OAuthStore`); `audience`
    /// is its API's identifier, nil for this server.
    func revokeClientAccessToken(_ claims: AccessTokenClaims, audience: String?) throws
    /// Revokes an opaque access token of `clientID`; true when the token was one.
    func revokeOpaqueAccessToken(_ token: String, clientID: String) throws -> Bool
    func refreshTokenInfo(_ token: String) throws -> RefreshTokenInfo?
    /// Revokes a refresh-token family and its access tokens.
    func revokeFamily(_ familyID: UUID, reason: String) throws
    /// Records a DPoP proof's `jti` (RFC 9449 §11.1); false when it was used before.
    func recordDPoPProof(_ proof: DPoPProof) throws -> Bool
}

extension RevocationFlow {
    /// The flow on the application's database.
    init(oauth: OAuthServices) {
        self.init(oauth: oauth, store: PostgresRevocationStore(db: oauth.pool))
    }
}

/// `RevocationStore` in PostgreSQL, one statement at a time (each revocation stands alone).
struct PostgresRevocationStore: RevocationStore {
    let db: any SQLExecutor

    /// Revokes an access token's record, only for the client it was issued to.
    func revokeAccessToken(jti: String, clientID: String) throws {
        try db.query(
            "UPDATE access_tokens SET revoked_at = now() WHERE jti = \(jti) AND client_id = \(clientID) AND revoked_at IS NULL"
        )
    }

    func revokeClientAccessToken(_ claims: AccessTokenClaims, audience: String?) throws {
        try OAuthStore.revokeClientAccessToken(claims, audience: audience, on: db)
    }

    func revokeOpaqueAccessToken(_ token: String, clientID: String) throws -> Bool {
        try OAuthStore.revokeOpaqueAccessToken(token, clientID: clientID, on: db)
    }

    func refreshTokenInfo(_ token: String) throws -> RefreshTokenInfo? {
        try OAuthStore.refreshTokenInfo(token, on: db)
    }

    func revokeFamily(_ familyID: UUID, reason: String) throws {
        try OAuthStore.revokeFamily(familyID, reason: reason, on: db)
    }

    func recordDPoPProof(_ proof: DPoPProof) throws -> Bool {
        try OAuthStore.recordDPoPProof(proof, asynchronousCommit: true, on: db)
    }
}
