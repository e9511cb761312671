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

    /// Ends what the account signed in to through a provider (`amr` `fed`): its sessions (their
    /// clients get back-channel logouts), the refresh-token families granted from them or by
    /// token exchange, and the access tokens of both. Sessions and tokens of a password or
    /// passkey sign-in stay. Returns how many sessions ended.
    static func signOutFederated(accountID: UUID, reason: String, on db: some SQLExecutor) throws -> Int {
        let sessions: [UUID] = try db.query(
            """
            UPDATE authentication_sessions SET revoked_at = now()
            WHERE account_id = \(accountID) AND revoked_at IS NULL AND 'fed' = ANY(amr)
            RETURNING id
            """
        ).map { try $0.decode("id") }
        let families: [UUID] = try db.query(
            """
            UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = \(reason)
            WHERE account_id = \(accountID) AND revoked_at IS NULL AND ('fed' = ANY(amr) OR session_id = ANY(\(sessions)))
            RETURNING id
            """
        ).map { try $0.decode("id") }
        try db.query(
            """
            UPDATE access_tokens SET revoked_at = now()
            WHERE account_id = \(accountID) AND revoked_at IS NULL
              AND (family_id = ANY(\(families)) OR session_id = ANY(\(sessions)))
            """)
        return sessions.count
    }
}
