import Foundation

/// Counts recovery requests in a fixed window per email address and per client address, in
/// PostgreSQL so that every instance shares the counts. Unlike `SignInThrottle`, every request
/// counts, successful or not: a recovery start sends mail, and a code check is a guess.
///
/// The email key is the normalized address as typed, whether or not it has an account, so a
/// throttled unknown address and a throttled real one answer alike.
struct RecoveryThrottle: Sendable {
    enum Step: Sendable { case start, verify }

    let settings: Configuration.RecoverySettings

    /// Counts this request and returns the seconds to wait when either count is over its
    /// limit, nil when the request may proceed.
    func hit(_ step: Step, email: String, client: String, on db: some SQLExecutor) throws -> Int? {
        let (emailScope, clientScope, emailLimit, clientLimit) =
            switch step {
            case .start:
                ("start_email", "start_client", settings.startMaxPerEmail, settings.startMaxPerClient)
            case .verify:
                ("verify_email", "verify_client", settings.verifyMaxPerEmail, settings.verifyMaxPerClient)
            }
        let counts = try WindowCounter.hit(
            .recoveryAttempts, .init(scope: emailScope, subject: email),
            .init(scope: clientScope, subject: client),
            windowSeconds: settings.throttleWindowSeconds, on: db)
        return WindowCounter.wait(counts) { $0 == emailScope ? emailLimit : clientLimit }
    }
}
