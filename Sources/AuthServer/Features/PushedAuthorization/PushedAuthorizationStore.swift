import Foundation
import OIDC
import Postgres

/// What `PushedAuthorizationFlow` stores: one statement per push.
protocol PushedAuthorizationStore: Sendable {
    /// Stores a pushed request under the digest of its reference, live for `lifetimeSeconds`.
    func insert(
        referenceDigest: [UInt8], clientID: String, parameters: String, requestObjectSigned: Bool,
        lifetimeSeconds: Int) throws
    /// Records a request object's `jti`; false when it was used before (RFC 9101 §10.1).
    func recordRequestObjectID(clientID: String, jti: String, expiresAt: Date) throws -> Bool
}

struct PostgresPushedAuthorizationStore: PushedAuthorizationStore {
    let db: any SQLExecutor & Sendable

    func insert(
        referenceDigest: [UInt8], clientID: String, parameters: String, requestObjectSigned: Bool,
        lifetimeSeconds: Int
    ) throws {
        try db.query(
            """
            INSERT INTO pushed_authorization_requests
                (reference_digest, client_id, parameters, request_object_signed, expires_at)
            VALUES (\(referenceDigest), \(clientID), \(parameters), \(requestObjectSigned),
                    now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func recordRequestObjectID(clientID: String, jti: String, expiresAt: Date) throws -> Bool {
        try RequestObjects.recordID(clientID: clientID, jti: jti, expiresAt: expiresAt, on: db)
    }
}
