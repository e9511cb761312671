-- migrate: no-transaction
-- migrate: previous-checksum 69fb73b87bad8d72603fb15f7250022a38c4dd47aef12df4c429f5fe5237d299
-- Sign in with Apple server-to-server notifications: the `jti` of each one acted on, so a
-- notification delivered twice (Apple retries, or someone replays a captured body) acts once.
-- Kept until its `iat` is older than the verifier accepts anyway; the maintenance pass purges
-- the rest. Only the SHA-256 digest of the jti is stored.
--
-- Written to run beside traffic (see "Writing a migration" in docs/operations.md); the checksum
-- above is its first form, one transaction that held upstream_identities locked through a scan
-- and an index build. Databases that applied it hold the same schema.
CREATE TABLE IF NOT EXISTS apple_notification_ids (
    jti_digest bytea PRIMARY KEY CHECK (length(jti_digest) = 32),
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS apple_notification_ids_expires ON apple_notification_ids (expires_at);

-- The client id Apple issued an identity's refresh token to (an app's bundle id for a native
-- sign-in; NULL: the Services ID of the web flow): Apple revokes a token only for its client.
ALTER TABLE upstream_identities
    ADD COLUMN IF NOT EXISTS refresh_token_client_id text,
    DROP CONSTRAINT IF EXISTS upstream_identities_refresh_token_client_id_check,
    ADD CONSTRAINT upstream_identities_refresh_token_client_id_check
        CHECK (length(refresh_token_client_id) <= 255) NOT VALID;
ALTER TABLE upstream_identities VALIDATE CONSTRAINT upstream_identities_refresh_token_client_id_check;

-- The mailer asks whether a recipient is a relay address Apple reported undeliverable.
CREATE INDEX CONCURRENTLY IF NOT EXISTS upstream_identities_undeliverable ON upstream_identities (lower(email))
    WHERE NOT email_deliverable;
