import Foundation
import Postgres

/// Counts recovery requests in a fixed window per email address and per client address, in
/// PostgreSQL so that every instance shares the counts. Unlike `SignInThrottle`, every request
/// counts, successful or not: a recovery start sends mail, and a code check is a guess.
///
/// The email key is the normalized address as typed, whether or not it has an account, so a
/// throttled unknown address and a throttled real one answer alike.
struct RecoveryThrottle: Sendable {
    enum Step: Sendable { case start, verify }

    let pool: PostgresPool
    let settings: Configuration.RecoverySettings

    /// Counts this request and returns the seconds to wait when either count is over its
    /// limit, nil when the request may proceed.
    func hit(_ step: Step, email: String, client: String) throws -> Int? {
        let (emailScope, clientScope, emailLimit, clientLimit) =
            switch step {
            case .start:
                ("start_email", "start_client", settings.startMaxPerEmail, settings.startMaxPerClient)
            case .verify:
                ("verify_email", "verify_client", settings.verifyMaxPerEmail, settings.verifyMaxPerClient)
            }
        let window = settings.throttleWindowSeconds
        let rows = try pool.query(
            """
            INSERT INTO recovery_attempts AS a (scope, subject, attempts, window_started_at)
            VALUES (\(emailScope), \(email), 1, now()), (\(clientScope), \(client), 1, now())
            ON CONFLICT (scope, subject) DO UPDATE SET
                attempts = CASE WHEN a.window_started_at <= now() - make_interval(secs => \(window)::float8)
                                THEN 1 ELSE a.attempts + 1 END,
                window_started_at = CASE WHEN a.window_started_at <= now() - make_interval(secs => \(window)::float8)
                                THEN now() ELSE a.window_started_at END
            RETURNING scope, attempts,
                      ceil(extract(epoch FROM window_started_at + make_interval(secs => \(window)::float8) - now()))::bigint AS remaining
            """)
        var wait: Int?
        for row in rows {
            let scope: String = try row.decode("scope")
            let attempts: Int = try row.decode("attempts")
            if attempts > (scope == emailScope ? emailLimit : clientLimit) {
                let remaining: Int = try row.decode("remaining")
                wait = max(wait ?? 1, max(1, remaining))
            }
        }
        return wait
    }
}
