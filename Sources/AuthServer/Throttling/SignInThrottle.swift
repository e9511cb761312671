import Foundation
import Postgres

/// Counts failed sign-ins in a fixed window per account and per client address, in PostgreSQL
/// so that every instance shares the counts.
///
/// The account key is the normalized email as typed, whether or not such an account exists:
/// a throttled unknown address and a throttled real one answer alike.
struct SignInThrottle: Sendable {
    let pool: PostgresPool
    let settings: Configuration.SignInThrottleSettings

    /// Seconds until another attempt is allowed, or nil when attempts are allowed now.
    func retryAfter(accountKey: String, address: String) throws -> Int? {
        let rows = try pool.query(
            """
            SELECT scope, failures,
                   ceil(extract(epoch FROM window_started_at + make_interval(secs => \(settings.windowSeconds)::float8) - now()))::bigint AS remaining
            FROM sign_in_failures
            WHERE ((scope = 'account' AND subject = \(accountKey)) OR (scope = 'address' AND subject = \(address)))
              AND window_started_at > now() - make_interval(secs => \(settings.windowSeconds)::float8)
            """)
        var wait: Int?
        for row in rows {
            let scope: String = try row.decode("scope")
            let failures: Int = try row.decode("failures")
            let limit = scope == "account" ? settings.accountMaxFailures : settings.addressMaxFailures
            if failures >= limit {
                let remaining: Int = try row.decode("remaining")
                wait = max(wait ?? 1, max(1, remaining))
            }
        }
        return wait
    }

    func recordFailure(accountKey: String, address: String) throws {
        for (scope, subject) in [("account", accountKey), ("address", address)] {
            try pool.query(
                """
                INSERT INTO sign_in_failures AS f (scope, subject, failures, window_started_at)
                VALUES (\(scope), \(subject), 1, now())
                ON CONFLICT (scope, subject) DO UPDATE SET
                    failures = CASE WHEN f.window_started_at <= now() - make_interval(secs => \(settings.windowSeconds)::float8)
                                    THEN 1 ELSE f.failures + 1 END,
                    window_started_at = CASE WHEN f.window_started_at <= now() - make_interval(secs => \(settings.windowSeconds)::float8)
                                    THEN now() ELSE f.window_started_at END
                """)
        }
    }

    /// After a successful sign-in the account's count starts again; the address's does not,
    /// so one valid account cannot be used to reset guessing against others.
    func recordSuccess(accountKey: String) throws {
        try pool.query("DELETE FROM sign_in_failures WHERE scope = 'account' AND subject = \(accountKey)")
    }
}
