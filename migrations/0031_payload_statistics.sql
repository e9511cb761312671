-- migrate: no-transaction
-- No planner statistics for the columns that every request writes and no statement filters,
-- joins or sorts on: the payload of codes, access-token records, refresh-token families and
-- browser sessions (scopes, claims, nonces, user agents and the like). These tables take a row
-- per request, so autovacuum analyzes them again each time a tenth of their rows is new, and
-- much of an ANALYZE's work went into these columns: element statistics of the text arrays and
-- histograms of long text. On the database of bench/seed --scale 1.0, an ANALYZE of the 300 000
-- codes took 370 ms before and 190 ms after, of the 2 M refresh-token families 330 and 230 ms,
-- of the 20 M access-token records 1.1 and 0.8 s; under load that time is taken from the
-- requests (bench/NOTES.md, "Statistics only where a statement filters"). Columns a statement
-- filters on keep the default target: each table's keys, expiries, revocation times, and `amr`
-- of sessions and families (the Apple notifications select federated sessions by it).
--
-- Written to run beside traffic: each statement on its own, SHARE UPDATE EXCLUSIVE on one table
-- (reads and writes go on), catalogue only, and it may run again. ANALYZE skips these columns
-- from now on; statistics it gathered for them before stay, unused.
ALTER TABLE authorization_codes
    ALTER COLUMN redirect_uri SET STATISTICS 0, ALTER COLUMN code_challenge SET STATISTICS 0,
    ALTER COLUMN nonce SET STATISTICS 0, ALTER COLUMN scopes SET STATISTICS 0,
    ALTER COLUMN id_token_claims SET STATISTICS 0, ALTER COLUMN amr SET STATISTICS 0,
    ALTER COLUMN userinfo_claims SET STATISTICS 0, ALTER COLUMN resources SET STATISTICS 0,
    ALTER COLUMN dpop_jkt SET STATISTICS 0, ALTER COLUMN auth_time SET STATISTICS 0;

ALTER TABLE access_tokens
    ALTER COLUMN scopes SET STATISTICS 0, ALTER COLUMN userinfo_claims SET STATISTICS 0,
    ALTER COLUMN audience SET STATISTICS 0, ALTER COLUMN dpop_jkt SET STATISTICS 0,
    ALTER COLUMN issued_at SET STATISTICS 0;

ALTER TABLE refresh_token_families
    ALTER COLUMN scopes SET STATISTICS 0, ALTER COLUMN id_token_claims SET STATISTICS 0,
    ALTER COLUMN userinfo_claims SET STATISTICS 0, ALTER COLUMN resources SET STATISTICS 0,
    ALTER COLUMN dpop_jkt SET STATISTICS 0, ALTER COLUMN revoked_reason SET STATISTICS 0,
    ALTER COLUMN auth_time SET STATISTICS 0;

ALTER TABLE authentication_sessions
    ALTER COLUMN user_agent SET STATISTICS 0, ALTER COLUMN client_address SET STATISTICS 0,
    ALTER COLUMN auth_time SET STATISTICS 0, ALTER COLUMN idle_timeout_seconds SET STATISTICS 0,
    ALTER COLUMN from_recovery SET STATISTICS 0;
