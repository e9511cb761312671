-- migrate: no-transaction
-- The idle deadline of a browser session as a column, so that the maintenance purge
-- (App/Maintenance.swift) finds idle sessions through an index instead of reading the whole
-- table on every pass. `last_seen_at + make_interval(secs => idle_timeout_seconds)` cannot be
-- indexed as an expression, nor be a generated column: `timestamptz + interval` is only stable.
--
-- Written to run beside traffic on a large authentication_sessions table (see "Writing a
-- migration" in docs/operations.md): each statement commits on its own and may run again.

-- Nullable, no default: a catalogue change.
ALTER TABLE authentication_sessions ADD COLUMN IF NOT EXISTS idle_expires_at timestamptz;

-- The column is derived by a trigger, not written by the server. During a rolling upgrade the
-- previous version keeps inserting sessions and moving `last_seen_at` without knowing the
-- column; only a trigger keeps its rows right, and with it every writer (server, operator SQL)
-- leaves the same value, as a generated column would. A write of `idle_expires_at` itself is
-- overridden too, so the column cannot drift from the two it is computed from. The cost is a
-- PL/pgSQL call per insert and per once-a-minute touch of `last_seen_at` (about 0.03 ms); the
-- larger cost is the index on the column below, which makes every touch write a new entry in each
-- of the table's indexes (no HOT update).
CREATE OR REPLACE FUNCTION authentication_sessions_idle_deadline() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.idle_expires_at := NEW.last_seen_at + make_interval(secs => NEW.idle_timeout_seconds);
    RETURN NEW;
END
$$;

-- The trigger comes before the backfill, so a session touched while it runs keeps its newer
-- deadline.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'authentication_sessions_idle_deadline'
                   AND tgrelid = 'authentication_sessions'::regclass) THEN
        CREATE TRIGGER authentication_sessions_idle_deadline
            BEFORE INSERT OR UPDATE OF last_seen_at, idle_timeout_seconds, idle_expires_at
            ON authentication_sessions
            FOR EACH ROW EXECUTE FUNCTION authentication_sessions_idle_deadline();
    END IF;
END
$$;

-- Existing sessions, in primary-key order, 10 000 rows per committed batch: each batch holds its
-- rows' locks for a fraction of a second (a request touching one of them waits that long), and no
-- batch scans rows an earlier one already did. Rows already set (by the trigger, or by an
-- earlier run of this file) are skipped.
DO $$
DECLARE
    done uuid := '00000000-0000-0000-0000-000000000000';
    upto uuid;
BEGIN
    LOOP
        SELECT id INTO upto FROM (
            SELECT id FROM authentication_sessions WHERE id > done ORDER BY id LIMIT 10000) batch
        ORDER BY id DESC LIMIT 1;
        EXIT WHEN upto IS NULL;
        UPDATE authentication_sessions SET idle_expires_at = last_seen_at + make_interval(secs => idle_timeout_seconds)
        WHERE id > done AND id <= upto AND idle_expires_at IS NULL;
        COMMIT;
        done := upto;
    END LOOP;
END
$$;

-- NOT NULL through a validated CHECK: the validation scans without blocking reads or writes, and
-- SET NOT NULL then trusts the CHECK instead of scanning under its ACCESS EXCLUSIVE lock. A row
-- the trigger did not fill (a load with triggers disabled) fails the validation instead of
-- passing as a session without an idle deadline.
ALTER TABLE authentication_sessions
    DROP CONSTRAINT IF EXISTS authentication_sessions_idle_expires_at_not_null,
    ADD CONSTRAINT authentication_sessions_idle_expires_at_not_null CHECK (idle_expires_at IS NOT NULL) NOT VALID;
ALTER TABLE authentication_sessions VALIDATE CONSTRAINT authentication_sessions_idle_expires_at_not_null;
ALTER TABLE authentication_sessions ALTER COLUMN idle_expires_at SET NOT NULL;
ALTER TABLE authentication_sessions DROP CONSTRAINT authentication_sessions_idle_expires_at_not_null;

-- The purge's three terms (`expires_at < … OR revoked_at < … OR idle_expires_at < …`), each
-- served by its own index and combined by a BitmapOr; revoked_at only where set, as most
-- sessions end unrevoked.
CREATE INDEX CONCURRENTLY IF NOT EXISTS authentication_sessions_expires
    ON authentication_sessions (expires_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS authentication_sessions_revoked
    ON authentication_sessions (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS authentication_sessions_idle_expires
    ON authentication_sessions (idle_expires_at);
