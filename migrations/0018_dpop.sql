-- DPoP (RFC 9449). The proofs already used, so that a proof replayed to any instance is
-- refused (§11.1): the SHA-256 digest of the key thumbprint and the proof's jti, kept until
-- the proof would be too old anyway. And the key thumbprint (`jkt`, §6.1) each code, refresh-token
-- family and access token is bound to: a code by `dpop_jkt` at /authorize (§10), a public
-- client's refresh tokens by the proof of their first token request (§5), an access token by
-- the proof of the request that issued it (its `cnf.jkt`, kept here for opaque tokens and
-- introspection, §6.2).
CREATE TABLE dpop_proofs (
    proof_digest bytea PRIMARY KEY CHECK (length(proof_digest) = 32),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX dpop_proofs_expires ON dpop_proofs (expires_at);

ALTER TABLE authorization_codes ADD COLUMN dpop_jkt text;
ALTER TABLE refresh_token_families ADD COLUMN dpop_jkt text;
ALTER TABLE access_tokens ADD COLUMN dpop_jkt text;
