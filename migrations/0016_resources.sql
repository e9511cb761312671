-- APIs (resource servers) as configured resources (RFC 8707, RFC 9068, RFC 7662).
-- A grant remembers the APIs it covers; each access token records its audience, and an
-- opaque access token (for APIs configured with "format": "opaque") its SHA-256 digest.

ALTER TABLE authorization_codes ADD COLUMN resources text[] NOT NULL DEFAULT '{}';
ALTER TABLE refresh_token_families ADD COLUMN resources text[] NOT NULL DEFAULT '{}';

-- NULL audience: a token for this server's own endpoints (userinfo).
ALTER TABLE access_tokens ADD COLUMN audience text;
ALTER TABLE access_tokens ADD COLUMN token_digest bytea;
CREATE UNIQUE INDEX access_tokens_token_digest ON access_tokens (token_digest) WHERE token_digest IS NOT NULL;
