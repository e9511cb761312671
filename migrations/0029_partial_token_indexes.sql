-- migrate: no-transaction
-- The access-token records' indexes on family_id and authorization_code_id hold only the rows
-- that have one. Every lookup through them names a value (`family_id = …`,
-- `authorization_code_id = …`), which a NULL never matches, while most records carry NULL in
-- one or both: a client_credentials token in both, a token issued by a refresh in
-- authorization_code_id. Before, each such insert still added its NULL entries to both
-- indexes (at bench/seed --scale 1.0, 414 MiB of the two).
--
-- Written to run beside traffic (see "Writing a migration" in docs/operations.md): each new
-- index is built concurrently before the one it replaces is dropped concurrently, so a lookup
-- always has one of them, and the file may run again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS access_tokens_family_present
    ON access_tokens (family_id) WHERE family_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS access_tokens_family;
CREATE INDEX CONCURRENTLY IF NOT EXISTS access_tokens_code_present
    ON access_tokens (authorization_code_id) WHERE authorization_code_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS access_tokens_code;
