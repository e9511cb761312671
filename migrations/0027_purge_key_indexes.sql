-- migrate: no-transaction
-- Indexes for the maintenance purges (App/Maintenance.swift) whose batches walk a timestamp
-- column in order (`ORDER BY key LIMIT n`): without an index that leads with the key, every
-- batch of every pass reads and sorts the whole table. bench/explain found the sign-in throttle
-- so on the database of bench/seed --scale 1.0, and a test (MaintenanceTests) then found the
-- others. The throttle tables hold a row per address and per client address that failed within
-- the window, so a password or sign-up spray over many addresses makes them as large as the
-- attacker likes.
--
-- Written to run beside traffic (see "Writing a migration" in docs/operations.md): each index
-- is built concurrently, and the file may run again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS sign_in_failures_window_started
    ON sign_in_failures (window_started_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS sign_up_attempts_window_started
    ON sign_up_attempts (window_started_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS recovery_attempts_window_started
    ON recovery_attempts (window_started_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS email_verification_guesses_window_started
    ON email_verification_guesses (window_started_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS email_verification_codes_expires
    ON email_verification_codes (expires_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS recovery_codes_created
    ON recovery_codes (created_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS backchannel_logout_deliveries_created
    ON backchannel_logout_deliveries (created_at);
