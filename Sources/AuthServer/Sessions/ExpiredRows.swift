import Postgres

/// Removes one-time rows, sessions and throttle windows well past their end, so the tables
/// stay small. Any instance may run it at any time; it runs opportunistically from the
/// endpoints that create one-time rows (about one call in a hundred), so no scheduler is needed.
enum ExpiredRows {
    static func purge(on db: some SQLExecutor) throws {
        try db.query("DELETE FROM passkey_registration_challenges WHERE expires_at < now() - interval '1 hour'")
        try db.query("DELETE FROM passkey_authentication_challenges WHERE expires_at < now() - interval '1 hour'")
        try db.query(
            "DELETE FROM passkey_account_registrations WHERE expires_at < now() - interval '1 hour' AND completed_at IS NULL")
        try db.query(
            """
            DELETE FROM authentication_sessions
            WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '30 days'
               OR last_seen_at + make_interval(secs => idle_timeout_seconds) < now() - interval '1 day'
            """)
        try db.query("DELETE FROM sign_in_failures WHERE window_started_at < now() - interval '1 day'")
        try db.query("DELETE FROM email_verification_codes WHERE expires_at < now() - interval '1 day'")
    }

    static func purgeOccasionally(_ services: AccountServices) {
        guard Int.random(in: 0..<100) == 0 else { return }
        do {
            try purge(on: services.pool)
        } catch {
            services.log.warning("maintenance.purge", ["step": "purgeExpiredRows", "reason": "\(type(of: error))"])
        }
    }
}
