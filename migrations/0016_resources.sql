-- migrate: no-transaction
-- migrate: previous-checksum 5714b67b2d0230c968a9fb55fed9bf2605fc59a52ebb182def23b88a351611dc
-- APIs (resource servers) as configured resources (RFC 8707, RFC 9068, RFC 7662).
-- A grant remembers the APIs it covers; each access token records its audience, and an
-- opaque access token (for APIs configured with "format": "opaque") its SHA-256 digest.
--
-- Written to run beside traffic on large token tables (see "Writing a migration" in
-- docs/operations.md). The checksum above is the first form of this file, one transaction that
-- held access_tokens' ACCESS EXCLUSIVE lock while it built the index; databases that applied it
-- hold the same schema.

-- A constant default is kept in the catalogue: no rewrite, and NOT NULL needs no scan.
ALTER TABLE authorization_codes ADD COLUMN IF NOT EXISTS resources text[] NOT NULL DEFAULT '{}';
ALTER TABLE refresh_token_families ADD COLUMN IF NOT EXISTS resources text[] NOT NULL DEFAULT '{}';

-- NULL audience: a token for this server's own endpoints (userinfo).
ALTER TABLE access_tokens ADD COLUMN IF NOT EXISTS audience text;
ALTER TABLE access_tokens ADD COLUMN IF NOT EXISTS token_digest bytea;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS access_tokens_token_digest ON access_tokens (token_digest)
    WHERE token_digest IS NOT NULL;
