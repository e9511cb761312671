import Foundation
import Postgres

/// A queued back-channel logout notification (OpenID Connect Back-Channel Logout 1.0 §2.5).
struct BackchannelLogoutDelivery: Sendable, Equatable {
    var id: UUID
    var clientID: String
    var uri: String
    var accountID: UUID
    /// Nil: the account was deleted while the client held its tokens outside any session.
    var sessionID: UUID?
    /// Attempts so far, this one included.
    var attempts: Int
}

/// What `BackchannelLogoutWorker` reads and records.
protocol BackchannelLogoutStore: Sendable {
    /// Claims up to ten due deliveries for a minute (`FOR UPDATE SKIP LOCKED`: another
    /// instance skips them) and counts the attempt.
    func claimDue() throws -> [BackchannelLogoutDelivery]
    func markDelivered(_ id: UUID, status: Int) throws
    /// Gives up on the delivery (out of attempts).
    func abandon(_ id: UUID, status: Int) throws
    /// Schedules the next attempt `delaySeconds` from now.
    func retry(_ id: UUID, status: Int, delaySeconds: Int) throws
}

struct PostgresBackchannelLogoutStore: BackchannelLogoutStore {
    let db: any SQLExecutor & Sendable

    func claimDue() throws -> [BackchannelLogoutDelivery] {
        try db.query(
            """
            UPDATE backchannel_logout_deliveries SET attempts = attempts + 1, next_attempt_at = now() + interval '60 seconds'
            WHERE id IN (
                SELECT id FROM backchannel_logout_deliveries
                WHERE delivered_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= now()
                ORDER BY next_attempt_at LIMIT 10 FOR UPDATE SKIP LOCKED)
            RETURNING id, client_id, uri, account_id, session_id, attempts
            """
        ).map {
            BackchannelLogoutDelivery(
                id: try $0.decode("id"), clientID: try $0.decode("client_id"), uri: try $0.decode("uri"),
                accountID: try $0.decode("account_id"),
                sessionID: try $0.decode("session_id", as: UUID?.self),
                attempts: try $0.decode("attempts"))
        }
    }

    func markDelivered(_ id: UUID, status: Int) throws {
        try db.query(
            "UPDATE backchannel_logout_deliveries SET delivered_at = now(), last_status = \(status) WHERE id = \(id)"
        )
        try forgetIfAccountDeleted(id)
    }

    func abandon(_ id: UUID, status: Int) throws {
        try db.query(
            "UPDATE backchannel_logout_deliveries SET abandoned_at = now(), last_status = \(status) WHERE id = \(id)"
        )
        try forgetIfAccountDeleted(id)
    }

    /// A delivery for a deleted account is the last row that names it (`AccountDeletion`): once
    /// it is done, it goes rather than being kept as a record. Run after the record, as a
    /// statement of its own: a deletion under way holds the row, so the record waits for its
    /// commit, and this statement then sees the account gone.
    private func forgetIfAccountDeleted(_ id: UUID) throws {
        try db.query(
            """
            DELETE FROM backchannel_logout_deliveries d
            WHERE d.id = \(id) AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = d.account_id)
            """)
    }

    func retry(_ id: UUID, status: Int, delaySeconds: Int) throws {
        try db.query(
            """
            UPDATE backchannel_logout_deliveries
            SET next_attempt_at = now() + make_interval(secs => \(delaySeconds)::float8), last_status = \(status)
            WHERE id = \(id)
            """)
    }
}
