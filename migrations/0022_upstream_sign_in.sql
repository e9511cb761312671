-- Signing in through an upstream OpenID provider (Apple, or any OpenID Connect provider).

-- One authorization request sent to an upstream provider. Only digests are kept: the state
-- (the random value the browser carries to the provider and back) as SHA-256, and the binding
-- cookie the browser received when the request started as SHA-256. The nonce and the PKCE
-- code_verifier are derived from the state with a key derived from the key-encryption key, so
-- they are never stored. Used once (consumed_at), and only before expires_at.
CREATE TABLE upstream_authorization_requests (
    state_digest   bytea PRIMARY KEY CHECK (length(state_digest) = 32),
    provider       text NOT NULL,
    -- sign_in: /signin or /signup; link: the signed-in account adds an identity from /account.
    purpose        text NOT NULL CHECK (purpose IN ('sign_in', 'link')),
    -- For purpose link: the account that asked. The link is made only to it.
    account_id     uuid REFERENCES accounts (id) ON DELETE CASCADE,
    -- Where the browser continues afterwards: a same-origin relative path (the pending
    -- /authorize request, or /account).
    return_to      text NOT NULL,
    ui_locales     text,
    binding_digest bytea NOT NULL CHECK (length(binding_digest) = 32),
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    consumed_at    timestamptz,
    CHECK ((purpose = 'link') = (account_id IS NOT NULL))
);
CREATE INDEX upstream_authorization_requests_expires ON upstream_authorization_requests (expires_at);

-- An upstream identity waiting for its link: the upstream vouched for an address an existing
-- account holds verified, so the user must first sign in to that account (passkey or
-- password). Bound to the browser by a cookie (digest only), used once, short-lived.
CREATE TABLE upstream_pending_links (
    token_digest     bytea PRIMARY KEY CHECK (length(token_digest) = 32),
    account_id       uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    provider         text NOT NULL,
    issuer           text NOT NULL,
    subject          text NOT NULL,
    email            text,
    email_verified   boolean NOT NULL,
    is_private_email boolean NOT NULL DEFAULT false,
    name             text,
    return_to        text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    consumed_at      timestamptz
);
CREATE INDEX upstream_pending_links_expires ON upstream_pending_links (expires_at);
