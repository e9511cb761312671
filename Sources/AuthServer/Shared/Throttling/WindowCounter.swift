import Foundation
import Postgres

/// Counts per `(scope, subject)` in a fixed window, in PostgreSQL so that every instance shares
/// them: the recovery, sign-up and verification-guess throttles. One statement counts an event
/// for two keys at once (an address and a client, an account and an address), so parallel
/// requests never read a count before the others wrote theirs.
enum WindowCounter {
    /// A counter table (`scope`, `subject`, a count column, `window_started_at`). Names are
    /// fixed here, never taken from input.
    enum Table: String, Sendable {
        case recoveryAttempts = "recovery_attempts"
        case signUpAttempts = "sign_up_attempts"
        case verificationGuesses = "email_verification_guesses"

        var countColumn: String { self == .verificationGuesses ? "guesses" : "attempts" }
    }

    struct Key: Sendable, Equatable {
        var scope: String
        var subject: String
    }

    /// A key's count after this event, and the seconds left in its window.
    struct Count: Sendable, Equatable {
        var scope: String
        var count: Int
        var remaining: Int
    }

    /// Counts one event for each key; a key whose window has ended starts a new one at 1.
    static func hit(_ table: Table, _ first: Key, _ second: Key, windowSeconds: Int, on db: some SQLExecutor)
        throws -> [Count]
    {
        let count = table.countColumn
        let rows = try db.query(
            """
            INSERT INTO \(raw: table.rawValue) AS c (scope, subject, \(raw: count), window_started_at)
            VALUES (\(first.scope), \(first.subject), 1, now()), (\(second.scope), \(second.subject), 1, now())
            ON CONFLICT (scope, subject) DO UPDATE SET
                \(raw: count) = CASE WHEN c.window_started_at <= now() - make_interval(secs => \(windowSeconds)::float8)
                                THEN 1 ELSE c.\(raw: count) + 1 END,
                window_started_at = CASE WHEN c.window_started_at <= now() - make_interval(secs => \(windowSeconds)::float8)
                                THEN now() ELSE c.window_started_at END
            RETURNING scope, \(raw: count) AS count,
                      ceil(extract(epoch FROM window_started_at + make_interval(secs => \(windowSeconds)::float8) - now()))::bigint AS remaining
            """)
        return try rows.map {
            Count(
                scope: try $0.decode("scope"), count: try $0.decode("count"),
                remaining: try $0.decode("remaining"))
        }
    }

    /// The seconds to wait when any count is over its scope's limit, nil when none is.
    static func wait(_ counts: [Count], limit: (String) -> Int) -> Int? {
        let over = counts.filter { $0.count > limit($0.scope) }
        guard !over.isEmpty else { return nil }
        return max(1, over.map(\.remaining).max() ?? 1)
    }
}
