-- CSRF tokens for the WebAuthn related origins (`webauthn.related_origins`, published at
-- /.well-known/webauthn). Their pages call the passkey sign-in endpoints across sites, where
-- the SameSite=Lax CSRF cookie is not sent, so each token is bound to the origin it was issued
-- to instead. Only the SHA-256 digest of a token is stored.
CREATE TABLE related_origin_csrf_tokens (
    token_digest bytea PRIMARY KEY CHECK (length(token_digest) = 32),
    origin       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX related_origin_csrf_tokens_expires ON related_origin_csrf_tokens (expires_at);
