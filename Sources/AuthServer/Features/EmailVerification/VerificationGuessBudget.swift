import Foundation

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
        let counts = try WindowCounter.hit(
            .verificationGuesses, .init(scope: "account", subject: accountID.lowercased),
            .init(scope: "address", subject: normalizedEmail), windowSeconds: settings.guessWindowSeconds,
            on: db
        ).map { (guesses: $0.count, remaining: $0.remaining) }
        return decide(counts, limit: settings.maxGuessesPerWindow)
    }
}
