import Crypto
import Foundation
import Postgres

/// SQL of the notification endpoint: the `jti`s already acted on, and the changes each event
/// makes to an account, each in the caller's transaction.
enum AppleNotificationsStore {
    /// Records the notification's `jti` (its SHA-256) until `expiresAt`; false when it was
    /// recorded before (a replay).
    static func recordJWTID(_ jti: String, expiresAt: Date, on db: some SQLExecutor) throws -> Bool {
        let digest = SHA256.hash(data: Array(jti.utf8)).bytes
        return try db.query(
            """
            INSERT INTO apple_notification_ids (jti_digest, expires_at) VALUES (\(digest), \(expiresAt))
            ON CONFLICT (jti_digest) DO NOTHING
            """
        ).affectedRows == 1
    }

    /// Unlinks the identity (whoever's account it is).
    static func unlink(_ identity: UpstreamIdentity, on db: some SQLExecutor) throws {
        _ = try UpstreamIdentityStore.delete(id: identity.id, accountID: identity.accountID, on: db)
    }
}
