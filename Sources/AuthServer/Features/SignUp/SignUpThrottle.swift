import Foundation

/// Counts sign-ups in a fixed window per normalized address (whether or not an account holds
/// it, so a throttled new address and a throttled taken one answer alike) and per client
/// address, in PostgreSQL so that every instance shares the counts. Every attempt counts.
enum SignUpThrottle {
    /// The seconds to wait when either count of this sign-up is over its limit, nil when the
    /// sign-up may proceed.
    static func wait(_ counts: [WindowCounter.Count], settings: SignUpSettings) -> Int? {
        WindowCounter.wait(counts) { $0 == "email" ? settings.maxPerEmail : settings.maxPerClient }
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
