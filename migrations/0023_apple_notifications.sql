-- Sign in with Apple server-to-server notifications: the `jti` of each one acted on, so a
-- notification delivered twice (Apple retries, or someone replays a captured body) acts once.
-- Kept until its `iat` is older than the verifier accepts anyway; the maintenance pass purges
-- the rest. Only the SHA-256 digest of the jti is stored.
CREATE TABLE apple_notification_ids (
    jti_digest bytea PRIMARY KEY CHECK (length(jti_digest) = 32),
    expires_at timestamptz NOT NULL
);
CREATE INDEX apple_notification_ids_expires ON apple_notification_ids (expires_at);

-- The client id Apple issued an identity's refresh token to (an app's bundle id for a native
-- sign-in; NULL: the Services ID of the web flow): Apple revokes a token only for its client.
ALTER TABLE upstream_identities ADD COLUMN refresh_token_client_id text
    CHECK (length(refresh_token_client_id) <= 255);

-- The mailer asks whether a recipient is a relay address Apple reported undeliverable.
CREATE INDEX upstream_identities_undeliverable ON upstream_identities (lower(email))
    WHERE NOT email_deliverable;
