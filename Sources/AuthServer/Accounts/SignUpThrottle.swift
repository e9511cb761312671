import Foundation
import Postgres

/// Counts sign-ups in a fixed window per normalized address (whether or not an account holds
/// it, so a throttled new address and a throttled taken one answer alike) and per client
/// address, in PostgreSQL so that every instance shares the counts. Every attempt counts.
struct SignUpThrottle: Sendable {
    let pool: PostgresPool
    let settings: SignUpSettings

    /// Counts this sign-up and returns the seconds to wait when either count is over its
    /// limit, nil when the sign-up may proceed.
    func hit(normalizedEmail: String, client: String) throws -> Int? {
        let window = settings.windowSeconds
        let rows = try pool.query(
            """
            INSERT INTO sign_up_attempts AS a (scope, subject, attempts, window_started_at)
            VALUES ('email', \(normalizedEmail), 1, now()), ('client', \(client), 1, now())
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
            if attempts > (scope == "email" ? settings.maxPerEmail : settings.maxPerClient) {
                let remaining: Int = try row.decode("remaining")
                wait = max(wait ?? 1, max(1, remaining))
            }
        }
        return wait
    }
}

extension APIError {
    static func signUpThrottled(retryAfter: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "too_many_requests",
            message: "Too many sign-ups. Wait a while before trying again.",
            headers: ["Retry-After": String(max(1, retryAfter))])
    }
}

extension AccountServices {
    /// Counts a sign-up attempt; throws 429 past the limits.
    func checkSignUpThrottle(email: EmailAddress, clientAddress: String) throws(APIError) {
        let wait = try guarded("signup.throttle") {
            try SignUpThrottle(pool: pool, settings: configuration.signUp).hit(
                normalizedEmail: email.normalized, client: clientAddress)
        }
        if let wait {
            log.warning("signup", ["step": "throttle", "reason": "tooManySignUps", "address": clientAddress])
            throw APIError.signUpThrottled(retryAfter: wait)
        }
    }
}
