-- migrate: no-transaction
-- Indexes for the maintenance purges (App/Maintenance.swift), found by `bench/explain` on a
-- seeded database: without them, once the backlog is purged, every pass read the whole table to
-- find the few rows due.
-- - refresh_token_families: `absolute_expires_at < … OR revoked_at < …` is served by a BitmapOr
--   of the two (revoked_at only where set: most families are live or expire unrevoked).
-- - reauthentication_challenges: deleting a session cascades to its challenges; without an index
--   on session_id each deleted session scanned the table.
CREATE INDEX CONCURRENTLY IF NOT EXISTS refresh_token_families_absolute_expires
    ON refresh_token_families (absolute_expires_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS refresh_token_families_revoked
    ON refresh_token_families (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS reauthentication_challenges_session
    ON reauthentication_challenges (session_id);
