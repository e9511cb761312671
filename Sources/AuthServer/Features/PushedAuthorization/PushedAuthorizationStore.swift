import Foundation
import OIDC
import Postgres

/// What `PushedAuthorizationFlow` stores: one statement per push.
protocol PushedAuthorizationStore: Sendable {
    /// Stores a pushed request under the digest of its reference, live for `lifetimeSeconds`.
    func insert(referenceDigest: [UInt8], clientID: String, parameters: String, lifetimeSeconds: Int) throws
}

struct PostgresPushedAuthorizationStore: PushedAuthorizationStore {
    let db: any SQLExecutor & Sendable

    func insert(referenceDigest: [UInt8], clientID: String, parameters: String, lifetimeSeconds: Int) throws {
        try db.query(
            """
            INSERT INTO pushed_authorization_requests (reference_digest, client_id, parameters, expires_at)
            VALUES (\(referenceDigest), \(clientID), \(parameters),
                    now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }
}
