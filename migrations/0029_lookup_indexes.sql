-- migrate: no-transaction
-- Indexes for lookups that read whole tables, found by running the tests with sequential scans
-- priced out (`enable_seqscan = off`, plans logged by auto_explain), and the access-token
-- records' indexes made partial.
--
-- 1. The access-token records' indexes on family_id and authorization_code_id hold only the rows
--    that have one. Every lookup through them names a value (`family_id = …`,
--    `authorization_code_id = …`), which a NULL never matches, while most records carry NULL in
--    one or both: a client_credentials token in both, a token issued by a refresh in
--    authorization_code_id. Before, each such insert still added its NULL entries to both
--    indexes (at bench/seed --scale 1.0, 414 MiB of the two).
-- 2. Deleting an account (or an address, or a recovery session) deletes the rows that reference
--    it by ON DELETE CASCADE: without an index on the referencing column each deletion read the
--    whole referencing table. A test checks every foreign key of the schema.
-- 3. Deleting an account also ends first-party sign-ups in progress for its addresses
--    (`lower(sign_up_email)`), and renames it in other accounts' audit events that name it
--    (`detail->>'verified_by'`: an address released when this account verified it). The second
--    read every audit event of the year, as text, per deletion. Its index holds only the events
--    that carry the member.
--
-- Written to run beside traffic (see "Writing a migration" in docs/operations.md): each new
-- index is built concurrently, the two it replaces are dropped concurrently after their
-- replacements exist, and the file may run again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS access_tokens_family_present
    ON access_tokens (family_id) WHERE family_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS access_tokens_family;
CREATE INDEX CONCURRENTLY IF NOT EXISTS access_tokens_code_present
    ON access_tokens (authorization_code_id) WHERE authorization_code_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS access_tokens_code;

CREATE INDEX CONCURRENTLY IF NOT EXISTS recovery_codes_account ON recovery_codes (account_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS recovery_sessions_account ON recovery_sessions (account_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS recovery_passkey_challenges_session
    ON recovery_passkey_challenges (recovery_session_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS upstream_authorization_requests_account
    ON upstream_authorization_requests (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS upstream_pending_links_account ON upstream_pending_links (account_id);
CREATE INDEX CONCURRENTLY IF NOT EXISTS email_change_undos_account_email
    ON email_change_undos (account_email_id);

CREATE INDEX CONCURRENTLY IF NOT EXISTS authorization_challenge_sessions_sign_up_email
    ON authorization_challenge_sessions (lower(sign_up_email));
CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_verified_by
    ON audit_events ((detail ->> 'verified_by')) WHERE detail ? 'verified_by';
