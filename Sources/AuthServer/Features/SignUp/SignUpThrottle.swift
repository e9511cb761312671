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
        let counts = try WindowCounter.hit(
            .signUpAttempts, .init(scope: "email", subject: normalizedEmail),
            .init(scope: "client", subject: client),
            windowSeconds: settings.windowSeconds, on: pool)
        return WindowCounter.wait(counts) { $0 == "email" ? settings.maxPerEmail : settings.maxPerClient }
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
