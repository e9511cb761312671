-- migrate: no-transaction
-- Planner statistics of `session_clients` sized as 0031 sized those of the other tables that take
-- a row per request: a session's first code for a client adds a row, and the purge of expired
-- sessions removes them by cascade, so autovacuum analyzes it again whenever a tenth of its rows
-- has changed. At the default target that ANALYZE samples 30 000 rows: 0.46–0.57 s each on the
-- database of bench/seed --scale 1.0 while the purge ran (bench/RESULTS.md, scenario 10).
-- `created_at` is only carried (target 0); the key, the account and the back-channel URI, on
-- which statements filter, keep statistics from a sample of 3 000 rows (target 10).
--
-- Written to run beside traffic, like 0031: SHARE UPDATE EXCLUSIVE on the table (reads and
-- writes go on), catalogue only, and it may run again.
ALTER TABLE session_clients
    ALTER COLUMN session_id SET STATISTICS 10, ALTER COLUMN client_id SET STATISTICS 10,
    ALTER COLUMN account_id SET STATISTICS 10, ALTER COLUMN backchannel_logout_uri SET STATISTICS 10,
    ALTER COLUMN created_at SET STATISTICS 0;
