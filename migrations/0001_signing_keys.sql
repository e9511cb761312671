-- Keys that sign ID tokens, access tokens and logout tokens.
-- The private key (PKCS#8 DER) is sealed with AES-256-GCM under the key-encryption key from
-- the configuration, with the kid as associated data, so a row cannot be swapped for another.
CREATE TABLE signing_keys (
    kid                 text PRIMARY KEY,
    algorithm           text NOT NULL CHECK (algorithm IN ('RS256', 'PS256', 'ES256', 'EdDSA')),
    public_jwk          text NOT NULL,
    sealed_private_key  bytea NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    -- Published in JWKS from creation; used for signing only from activates_at (pre-publication).
    activates_at        timestamptz NOT NULL,
    -- No longer used for signing from retires_at; still published until expires_at, so that
    -- tokens it signed can be verified until they expire.
    retires_at          timestamptz,
    expires_at          timestamptz,
    CHECK (retires_at IS NULL OR retires_at >= activates_at),
    CHECK (expires_at IS NULL OR (retires_at IS NOT NULL AND expires_at >= retires_at))
);

CREATE INDEX signing_keys_algorithm_activates_at ON signing_keys (algorithm, activates_at DESC);
