-- migrate: no-transaction
-- Planner statistics sized for the tables that take a row per request: authorization codes,
-- access-token records, refresh tokens and their families, browser sessions and passkey
-- challenges. Autovacuum analyzes each of them again whenever a tenth of its rows is new, and
-- an ANALYZE at the default target reads a sample of 30 000 rows and builds statistics for every
-- column, the element statistics of text arrays and histograms of long text included.
--
-- - Columns no statement filters, joins or sorts on (scopes, claims, nonces, user agents and the
--   like: what a row carries, not how it is found) get none (target 0).
-- - The others (keys, digests, expiries, revocation times, and `amr` of sessions and families,
--   by which the Apple notifications select federated sessions) get target 10: a sample of
--   3 000 rows. Every statement finds these rows through a unique key, a foreign key of a few
--   rows per value, or a time range, whose statistics such a sample gives well enough; bench/explain
--   checks the plan of each hot statement on a database of bench/seed, analyzed at these targets.
--
-- On the database of bench/seed --scale 1.0 an ANALYZE took, before and after: 300 000 codes
-- 0.33–0.69 s and 18–20 ms; 20 M access-token records 1.0–2.8 s and 0.1–0.4 s; 10 M refresh
-- tokens 2.1–2.7 s and 0.06–0.27 s; 2 M families 0.3–3.2 s and 30 ms; 5 M sessions 0.4–4.3 s and
-- 0.14–0.49 s; 400 000 challenges 0.1–0.2 s and 16 ms. Under load that time is taken from the
-- requests: in the runs of /authorize at 70 % of saturation on two cores, the 10 s windows with
-- an autoanalyze of the codes had a p99 of 11–63 ms, most of those without one 3–5 ms
-- (bench/NOTES.md, "Statistics sized for the tables that take a row per request"). A column added
-- to these tables later needs a target of its own, or the sample is 30 000 rows again (a test
-- checks).
--
-- Written to run beside traffic: each statement on its own, SHARE UPDATE EXCLUSIVE on one table
-- (reads and writes go on), catalogue only, and it may run again. The next ANALYZE gathers at
-- these targets; statistics gathered before for a column now at 0 stay, unused.
ALTER TABLE authorization_codes
    ALTER COLUMN id SET STATISTICS 10, ALTER COLUMN code_digest SET STATISTICS 10,
    ALTER COLUMN client_id SET STATISTICS 10, ALTER COLUMN account_id SET STATISTICS 10,
    ALTER COLUMN session_id SET STATISTICS 10, ALTER COLUMN created_at SET STATISTICS 10,
    ALTER COLUMN expires_at SET STATISTICS 10, ALTER COLUMN consumed_at SET STATISTICS 10,
    ALTER COLUMN redirect_uri SET STATISTICS 0, ALTER COLUMN code_challenge SET STATISTICS 0,
    ALTER COLUMN nonce SET STATISTICS 0, ALTER COLUMN scopes SET STATISTICS 0,
    ALTER COLUMN id_token_claims SET STATISTICS 0, ALTER COLUMN amr SET STATISTICS 0,
    ALTER COLUMN userinfo_claims SET STATISTICS 0, ALTER COLUMN resources SET STATISTICS 0,
    ALTER COLUMN dpop_jkt SET STATISTICS 0, ALTER COLUMN auth_time SET STATISTICS 0;

ALTER TABLE access_tokens
    ALTER COLUMN jti SET STATISTICS 10, ALTER COLUMN client_id SET STATISTICS 10,
    ALTER COLUMN account_id SET STATISTICS 10, ALTER COLUMN family_id SET STATISTICS 10,
    ALTER COLUMN authorization_code_id SET STATISTICS 10, ALTER COLUMN session_id SET STATISTICS 10,
    ALTER COLUMN token_digest SET STATISTICS 10, ALTER COLUMN expires_at SET STATISTICS 10,
    ALTER COLUMN revoked_at SET STATISTICS 10, ALTER COLUMN scopes SET STATISTICS 0,
    ALTER COLUMN userinfo_claims SET STATISTICS 0, ALTER COLUMN audience SET STATISTICS 0,
    ALTER COLUMN dpop_jkt SET STATISTICS 0, ALTER COLUMN issued_at SET STATISTICS 0;

ALTER TABLE refresh_tokens
    ALTER COLUMN token_digest SET STATISTICS 10, ALTER COLUMN family_id SET STATISTICS 10,
    ALTER COLUMN created_at SET STATISTICS 10, ALTER COLUMN expires_at SET STATISTICS 10,
    ALTER COLUMN rotated_at SET STATISTICS 10;

ALTER TABLE refresh_token_families
    ALTER COLUMN id SET STATISTICS 10, ALTER COLUMN client_id SET STATISTICS 10,
    ALTER COLUMN account_id SET STATISTICS 10, ALTER COLUMN session_id SET STATISTICS 10,
    ALTER COLUMN authorization_code_id SET STATISTICS 10, ALTER COLUMN amr SET STATISTICS 10,
    ALTER COLUMN created_at SET STATISTICS 10, ALTER COLUMN absolute_expires_at SET STATISTICS 10,
    ALTER COLUMN revoked_at SET STATISTICS 10, ALTER COLUMN scopes SET STATISTICS 0,
    ALTER COLUMN id_token_claims SET STATISTICS 0, ALTER COLUMN userinfo_claims SET STATISTICS 0,
    ALTER COLUMN resources SET STATISTICS 0, ALTER COLUMN dpop_jkt SET STATISTICS 0,
    ALTER COLUMN revoked_reason SET STATISTICS 0, ALTER COLUMN auth_time SET STATISTICS 0;

ALTER TABLE authentication_sessions
    ALTER COLUMN id SET STATISTICS 10, ALTER COLUMN account_id SET STATISTICS 10,
    ALTER COLUMN token_digest SET STATISTICS 10, ALTER COLUMN amr SET STATISTICS 10,
    ALTER COLUMN created_at SET STATISTICS 10, ALTER COLUMN last_seen_at SET STATISTICS 10,
    ALTER COLUMN expires_at SET STATISTICS 10, ALTER COLUMN revoked_at SET STATISTICS 10,
    ALTER COLUMN idle_expires_at SET STATISTICS 10, ALTER COLUMN user_agent SET STATISTICS 0,
    ALTER COLUMN client_address SET STATISTICS 0, ALTER COLUMN auth_time SET STATISTICS 0,
    ALTER COLUMN idle_timeout_seconds SET STATISTICS 0, ALTER COLUMN from_recovery SET STATISTICS 0;

ALTER TABLE passkey_authentication_challenges
    ALTER COLUMN id SET STATISTICS 10, ALTER COLUMN created_at SET STATISTICS 10,
    ALTER COLUMN expires_at SET STATISTICS 10, ALTER COLUMN consumed_at SET STATISTICS 10,
    ALTER COLUMN challenge SET STATISTICS 0;
