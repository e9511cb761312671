-- Identities at upstream providers (Sign in with Apple, other OpenID providers) linked to
-- accounts. An identity is its provider's (issuer, subject) pair and belongs to one account;
-- an account may hold several. The address is the provider's last word on it, kept apart from
-- the account's own addresses: a relay address of Apple's private email relay is real and
-- verified, and Apple may later report it undeliverable.
CREATE TABLE upstream_identities (
    id                       uuid PRIMARY KEY,
    account_id               uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- The configured provider id (`upstream_providers[].id`).
    provider                 text NOT NULL CHECK (length(provider) BETWEEN 1 AND 32),
    issuer                   text NOT NULL CHECK (length(issuer) BETWEEN 1 AND 400),
    subject                  text NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    email                    text CHECK (length(email) <= 320),
    email_verified           boolean NOT NULL DEFAULT false,
    is_private_email         boolean NOT NULL DEFAULT false,
    email_deliverable        boolean NOT NULL DEFAULT true,
    -- The provider's refresh token, AES-256-GCM under the key-encryption key, kept only to
    -- revoke it when the link or the account ends (Apple requires it).
    refresh_token_ciphertext bytea,
    created_at               timestamptz NOT NULL DEFAULT now(),
    last_used_at             timestamptz,
    UNIQUE (issuer, subject)
);
CREATE INDEX upstream_identities_account ON upstream_identities (account_id);
