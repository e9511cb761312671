import Foundation
import Postgres

/// Counts password checks per account and per client address, in PostgreSQL so that every
/// instance shares the counts.
///
/// Every check is counted before Argon2id runs, with one upsert per scope that returns the new
/// count, so guesses sent in parallel cannot all pass a count read before any of them failed.
/// Past its limit an account's password is locked, briefly at first and twice as long at each
/// lock-out in a row (up to a cap), so a stranger's guesses never lock the owner out for long;
/// passkey sign-in and recovery do not pass through here and keep working meanwhile. The client
/// address scope keeps a plain fixed window.
///
/// The account key is the normalized email as typed, whether or not such an account exists:
/// a throttled unknown address and a throttled real one answer alike.
struct SignInThrottle: Sendable {
    let pool: PostgresPool
    let settings: Configuration.SignInThrottleSettings

    /// Counts one password check for the client address and the account, in one statement.
    /// Returns the seconds to wait when the check must not run (the address is over its limit,
    /// or the account's password is locked), nil when it may run now. A check refused for its
    /// address does not count against the account.
    ///
    /// Per account, a locked password stays as it is and is refused. Otherwise the check counts
    /// in the window, and the one past `accountMaxFailures` is refused and locks the password
    /// for `lockoutSeconds × 2^level` (at most `maxLockoutSeconds`), where the level is the
    /// number of lock-outs in a row, forgotten `lockoutDecaySeconds` after the last one ended.
    /// The count is not reset by a lock-out: once it ends one more check runs and the next one
    /// locks again, twice as long. The window restarts when the lock-out ends, so the whole
    /// budget comes back only `windowSeconds` after the last lock-out.
    ///
    /// Committed without waiting for the disk: a PostgreSQL crash may forget the last moments
    /// of counts, which gives a guesser a few checks back once, and costs a sign-in no fsync.
    func admit(accountKey: String, address: String) throws -> Int? {
        let window = settings.windowSeconds
        let limit = settings.accountMaxFailures
        let row = try pool.query(
            """
            WITH address AS (
                INSERT INTO sign_in_failures AS f (scope, subject, failures, window_started_at)
                VALUES ('address', \(address), 1, now())
                ON CONFLICT (scope, subject) DO UPDATE SET
                    failures = CASE WHEN f.window_started_at <= now() - make_interval(secs => \(window)::float8)
                                    THEN 1 ELSE f.failures + 1 END,
                    window_started_at = CASE WHEN f.window_started_at <= now() - make_interval(secs => \(window)::float8)
                                    THEN now() ELSE f.window_started_at END
                RETURNING failures > \(settings.addressMaxFailures) AS over,
                          ceil(extract(epoch FROM window_started_at + make_interval(secs => \(window)::float8) - now()))::bigint AS remaining
            ),
            account AS (
                INSERT INTO sign_in_failures AS f (scope, subject, failures, window_started_at)
                SELECT 'account', \(accountKey), 1, now() FROM address WHERE NOT address.over
                ON CONFLICT (scope, subject) DO UPDATE SET (failures, window_started_at, lockouts, locked_until) = (
                    SELECT
                        CASE WHEN s.locked THEN f.failures WHEN s.expired THEN 1 WHEN s.locks THEN \(limit - 1)
                             ELSE f.failures + 1 END,
                        CASE WHEN s.locked THEN f.window_started_at WHEN s.expired THEN now()
                             WHEN s.locks THEN s.lock_ends ELSE f.window_started_at END,
                        CASE WHEN s.locks THEN s.level + 1 ELSE f.lockouts END,
                        CASE WHEN s.locks THEN s.lock_ends ELSE f.locked_until END
                    FROM (
                        SELECT locked, expired, NOT locked AND NOT expired AND at_limit AS locks, level,
                               now() + make_interval(secs => least(
                                   \(settings.lockoutSeconds)::float8 * power(2::float8, level),
                                   \(settings.maxLockoutSeconds)::float8)) AS lock_ends
                        FROM (
                            SELECT f.locked_until > now() AS locked,
                                   f.window_started_at <= now() - make_interval(secs => \(settings.windowSeconds)::float8) AS expired,
                                   f.failures >= \(limit) AS at_limit,
                                   CASE WHEN f.locked_until <= now() - make_interval(secs => \(settings.lockoutDecaySeconds)::float8)
                                        THEN 0 ELSE least(f.lockouts, 30) END AS level
                        ) AS state
                    ) AS s
                )
                RETURNING locked_until > now() AS locked,
                          CASE WHEN locked_until > now()
                               THEN ceil(extract(epoch FROM locked_until - now()))::bigint ELSE 0 END AS remaining
            )
            SELECT address.over AS address_over, address.remaining AS address_remaining,
                   account.locked AS account_locked, account.remaining AS account_remaining
            FROM \(.asynchronousCommit), address LEFT JOIN account ON true
            """
        ).first
        guard let row else { return nil }
        if try row.decode("address_over", as: Bool.self) {
            return max(1, try row.decode("address_remaining", as: Int.self))
        }
        guard try row.decode("account_locked", as: Bool?.self) == true else { return nil }
        return max(1, try row.decode("account_remaining", as: Int?.self) ?? 1)
    }

    /// After a right password of `accountID` (a sign-in, a re-authentication, a password
    /// change) the count and lock-outs of `accountKey` start again, but only when a password
    /// sign-in with that address reaches this account (`AccountStore.passwordCredential` picks
    /// it the same way): other accounts may hold the address unverified, and their owners'
    /// right passwords must not reset the guesses against the one sign-in reaches. The address
    /// gets back the one check this success used: failures stay counted there, so one valid
    /// account cannot be used to reset guessing against others.
    func recordSuccess(accountKey: String, address: String, signedInAs accountID: UUID) throws {
        try pool.query(
            """
            WITH cleared AS (
                DELETE FROM sign_in_failures WHERE scope = 'account' AND subject = \(accountKey)
                  AND \(accountID) = (
                      SELECT account_id FROM account_emails WHERE normalized_email = \(accountKey)
                      ORDER BY verified_at IS NULL, created_at, id LIMIT 1)
            )
            UPDATE sign_in_failures SET failures = failures - 1
            FROM \(.asynchronousCommit)
            WHERE scope = 'address' AND subject = \(address) AND failures > 0
            """)
    }

    /// Forgets the count and lock-outs of every address of the account: its owner proved
    /// control of it another way (a recovery that set a new password).
    static func clearAccount(_ accountID: UUID, on db: some SQLExecutor) throws {
        try db.query(
            """
            DELETE FROM sign_in_failures
            WHERE scope = 'account'
              AND subject IN (SELECT normalized_email FROM account_emails WHERE account_id = \(accountID))
            """)
    }
}
