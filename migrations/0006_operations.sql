-- migrate: no-transaction
-- migrate: previous-checksum 0ea96055f30d46e1b6f05e58aeae42121d5fb05fe45a596c50f206c567f1989b
-- Operations: an operator can disable an account without deleting it. A disabled account
-- cannot sign in, its sessions no longer count, and its tokens are refused; enabling it again
-- restores sign-in (sessions and tokens revoked at disable time stay revoked).
--
-- Written to run beside traffic (see "Writing a migration" in docs/operations.md); the checksum
-- above is its first form, one transaction that held accounts locked while five indexes were
-- built. Databases that applied it hold the same schema.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS disabled_at timestamptz;

-- Account deletion and the operator's views look these rows up by account.
CREATE INDEX CONCURRENTLY IF NOT EXISTS authorization_codes_account ON authorization_codes (account_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS access_tokens_account ON access_tokens (account_id)
    WHERE account_id IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS passkey_registration_challenges_account
    ON passkey_registration_challenges (account_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS session_clients_account ON session_clients (account_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS backchannel_logout_deliveries_account
    ON backchannel_logout_deliveries (account_id);
