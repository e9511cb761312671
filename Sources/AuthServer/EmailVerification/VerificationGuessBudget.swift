import Foundation
import Postgres

/// Guesses at verification codes, counted per account and per normalized address in a fixed
/// window. A new code does not reset these counts, so "resend, guess again" gains nothing, and
/// several accounts squatting one address share its count.
///
/// Every guess counts, before the code is compared: once the window's budget is spent even the
/// right code is refused until the window ends.
enum VerificationGuessBudget {
    enum Decision: Sendable, Equatable {
        case allowed
        /// `newlyLocked` is true for the one guess that spent the budget (audit and mail once).
        case locked(retryAfter: Int, newlyLocked: Bool)
    }

    /// The decision from the counts after this guess, each with the seconds left in its window.
    static func decide(_ counts: [(guesses: Int, remaining: Int)], limit: Int) -> Decision {
        let over = counts.filter { $0.guesses > limit }
        guard !over.isEmpty else { return .allowed }
        return .locked(
            retryAfter: max(1, over.map(\.remaining).max() ?? 1),
            newlyLocked: over.contains { $0.guesses == limit + 1 })
    }

    /// Counts one guess for the account and the address atomically and decides.
    static func spend(
        accountID: UUID, normalizedEmail: String, settings: EmailVerificationSettings,
        on db: some SQLExecutor
    ) throws -> Decision {
        let window = settings.guessWindowSeconds
        let rows = try db.query(
            """
            INSERT INTO email_verification_guesses AS g (scope, subject, guesses, window_started_at)
            VALUES ('account', \(accountID.uuidString.lowercased()), 1, now()), ('address', \(normalizedEmail), 1, now())
            ON CONFLICT (scope, subject) DO UPDATE SET
                guesses = CASE WHEN g.window_started_at <= now() - make_interval(secs => \(window)::float8)
                               THEN 1 ELSE g.guesses + 1 END,
                window_started_at = CASE WHEN g.window_started_at <= now() - make_interval(secs => \(window)::float8)
                               THEN now() ELSE g.window_started_at END
            RETURNING guesses,
                      ceil(extract(epoch FROM window_started_at + make_interval(secs => \(window)::float8) - now()))::bigint AS remaining
            """)
        let counts = try rows.map {
            (try $0.decode("guesses", as: Int.self), try $0.decode("remaining", as: Int.self))
        }
        return decide(counts, limit: settings.maxGuessesPerWindow)
    }
}
