-- migrate: no-transaction
-- migrate: previous-checksum 260a0a9445204c2daa95364b8273d3339a77992f157843e36aac27630d185644
-- Tokens issued under a browser session end with it, unless the user granted offline_access.
--
-- Written to run beside traffic (see "Writing a migration" in docs/operations.md); the checksum
-- above is its first form, one transaction that held access_tokens locked while its new index was
-- built. Databases that applied it hold the same schema.
--
-- access_tokens.session_id: the session an access token was issued under (NULL for
-- client_credentials and for tokens issued before this migration).
ALTER TABLE access_tokens ADD COLUMN IF NOT EXISTS session_id uuid;
CREATE INDEX CONCURRENTLY IF NOT EXISTS access_tokens_session ON access_tokens (session_id)
    WHERE session_id IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS refresh_token_families_session ON refresh_token_families (session_id)
    WHERE session_id IS NOT NULL AND revoked_at IS NULL;

-- However a session ends (RP-initiated logout, the sign-out button, revoking it from the
-- account page, signing in again in the same browser), in the same transaction: the
-- refresh-token families issued under it are revoked unless they were granted
-- offline_access, and so are the access tokens issued under it that do not belong to a
-- family still live.
CREATE OR REPLACE FUNCTION revoke_session_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = 'session_ended'
    WHERE session_id = NEW.id AND revoked_at IS NULL AND NOT ('offline_access' = ANY (scopes));
    UPDATE access_tokens a SET revoked_at = now()
    WHERE a.session_id = NEW.id AND a.revoked_at IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM refresh_token_families f WHERE f.id = a.family_id AND f.revoked_at IS NULL);
    RETURN NEW;
END;
$$;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'authentication_sessions_ended_revoke_tokens'
                   AND tgrelid = 'authentication_sessions'::regclass) THEN
        CREATE TRIGGER authentication_sessions_ended_revoke_tokens
            AFTER UPDATE OF revoked_at ON authentication_sessions
            FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
            EXECUTE FUNCTION revoke_session_tokens();
    END IF;
END
$$;
