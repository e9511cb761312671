-- Accounts and their credentials (a password, passkeys), browser sessions, the one-time rows
-- of the passkey ceremonies, and sign-in throttling. Secrets at rest are digests or hashes.

CREATE TABLE accounts (
    id                   uuid PRIMARY KEY,
    display_name         text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 200),
    -- WebAuthn user.id: 32 random bytes, never the account id and never personal data, so a
    -- passkey on a shared device reveals nothing about the account.
    webauthn_user_handle bytea NOT NULL UNIQUE CHECK (length(webauthn_user_handle) = 32),
    created_at           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE account_emails (
    id               uuid PRIMARY KEY,
    account_id       uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- As typed, for display and mail.
    email            text NOT NULL,
    -- Trimmed and lowercased: what sign-in compares and what is unique.
    normalized_email text NOT NULL UNIQUE,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_emails_account ON account_emails (account_id);

-- At most one password per account; its absence is the passwordless end state.
CREATE TABLE password_credentials (
    account_id    uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE passkey_credentials (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    credential_id   bytea NOT NULL UNIQUE CHECK (length(credential_id) BETWEEN 1 AND 1023),
    -- COSE_Key bytes as attested.
    public_key      bytea NOT NULL,
    algorithm       integer NOT NULL,
    sign_count      bigint NOT NULL DEFAULT 0,
    backup_eligible boolean NOT NULL,
    backed_up       boolean NOT NULL,
    transports      text[] NOT NULL DEFAULT '{}',
    aaguid          bytea NOT NULL CHECK (length(aaguid) = 16),
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_used_at    timestamptz
);
CREATE INDEX passkey_credentials_account ON passkey_credentials (account_id);

-- Browser sessions. Only the SHA-256 digest of the cookie's token is stored.
CREATE TABLE authentication_sessions (
    id           uuid PRIMARY KEY,
    account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    token_digest bytea NOT NULL UNIQUE CHECK (length(token_digest) = 32),
    -- RFC 8176 authentication method references of the sign-in (pwd, hwk, swk, user, mfa).
    amr          text[] NOT NULL,
    auth_time    timestamptz NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    -- Absolute end; the idle end is last_seen_at + idle_timeout_seconds.
    expires_at   timestamptz NOT NULL,
    idle_timeout_seconds integer NOT NULL CHECK (idle_timeout_seconds > 0),
    revoked_at   timestamptz,
    user_agent   text NOT NULL DEFAULT '',
    client_address text NOT NULL DEFAULT ''
);
CREATE INDEX authentication_sessions_account ON authentication_sessions (account_id);

-- Adding a passkey to an existing account. `conditional` marks the challenge issued right after
-- a password sign-in for the conditional upgrade: only that ceremony may carry UP=0.
CREATE TABLE passkey_registration_challenges (
    id          uuid PRIMARY KEY,
    account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    challenge   bytea NOT NULL CHECK (length(challenge) = 32),
    conditional boolean NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    consumed_at timestamptz
);
CREATE INDEX passkey_registration_challenges_expires ON passkey_registration_challenges (expires_at);

-- Signing in with a passkey (no account known beforehand: discoverable credentials).
CREATE TABLE passkey_authentication_challenges (
    id          uuid PRIMARY KEY,
    challenge   bytea NOT NULL CHECK (length(challenge) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    consumed_at timestamptz
);
CREATE INDEX passkey_authentication_challenges_expires ON passkey_authentication_challenges (expires_at);

-- Creating an account with a passkey: the account id and user handle are reserved here and
-- become the account only when the finish call writes account, email and passkey together.
-- No foreign key: the account does not exist yet.
CREATE TABLE passkey_account_registrations (
    id                     uuid PRIMARY KEY,
    prospective_account_id uuid NOT NULL UNIQUE,
    user_handle            bytea NOT NULL UNIQUE CHECK (length(user_handle) = 32),
    challenge              bytea NOT NULL CHECK (length(challenge) = 32),
    created_at             timestamptz NOT NULL DEFAULT now(),
    expires_at             timestamptz NOT NULL,
    completed_at           timestamptz
);
CREATE INDEX passkey_account_registrations_expires ON passkey_account_registrations (expires_at);

-- Failed sign-ins in a fixed window, per account (keyed by normalized email, so unknown and
-- known addresses behave alike) and per client address. Shared by every instance.
CREATE TABLE sign_in_failures (
    scope             text NOT NULL CHECK (scope IN ('account', 'address')),
    subject           text NOT NULL,
    failures          integer NOT NULL,
    window_started_at timestamptz NOT NULL,
    PRIMARY KEY (scope, subject)
);
