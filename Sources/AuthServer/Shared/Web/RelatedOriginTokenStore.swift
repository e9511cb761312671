import Foundation
import Postgres

/// The CSRF tokens issued to related origins (digests only).
protocol RelatedOriginTokenStore {
    /// Stores a token's digest for `origin` (the maintenance pass removes expired ones).
    func insert(digest: [UInt8], origin: String, lifetimeSeconds: Int) throws
    /// Whether an unexpired token with this digest was issued to `origin`.
    func isValid(digest: [UInt8], origin: String) throws -> Bool
}

struct PostgresRelatedOriginTokenStore: RelatedOriginTokenStore {
    let db: any SQLExecutor

    func insert(digest: [UInt8], origin: String, lifetimeSeconds: Int) throws {
        try db.query(
            """
            INSERT INTO related_origin_csrf_tokens (token_digest, origin, expires_at)
            VALUES (\(digest), \(origin), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func isValid(digest: [UInt8], origin: String) throws -> Bool {
        try !db.query(
            """
            SELECT 1 AS found FROM related_origin_csrf_tokens
            WHERE token_digest = \(digest) AND origin = \(origin) AND expires_at > now()
            """
        ).isEmpty
    }
}
