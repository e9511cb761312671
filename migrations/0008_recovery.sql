-- Account recovery by a code mailed to a verified address, the short-lived session that code
-- opens, and the counters of the passwordless policy. Codes and session tokens are stored as
-- SHA-256 digests only.

-- One-time codes. The digest is SHA-256(salt || code) with a random salt per row, so equal
-- codes never share a digest. A new code for an address retires the earlier live ones.
CREATE TABLE recovery_codes (
    id               uuid PRIMARY KEY,
    account_id       uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    normalized_email text NOT NULL,
    code_salt        bytea NOT NULL CHECK (length(code_salt) = 16),
    code_digest      bytea NOT NULL CHECK (length(code_digest) = 32),
    -- Wrong codes entered while this one was live; at recovery.max_attempts it stops working.
    attempts         integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    consumed_at      timestamptz
);
CREATE INDEX recovery_codes_email ON recovery_codes (normalized_email, created_at);
CREATE INDEX recovery_codes_expires ON recovery_codes (expires_at);

-- What a verified code opens: one chance to register a passkey or set a password. Its cookie
-- is accepted by the recovery endpoints only. `completed_at` marks it used.
CREATE TABLE recovery_sessions (
    id           uuid PRIMARY KEY,
    account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    token_digest bytea NOT NULL UNIQUE CHECK (length(token_digest) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    completed_at timestamptz
);
CREATE INDEX recovery_sessions_expires ON recovery_sessions (expires_at);

-- The registration challenge of a recovery: bound to its recovery session, never to a
-- browser session, so the ordinary passkey endpoints cannot consume it.
CREATE TABLE recovery_passkey_challenges (
    id                  uuid PRIMARY KEY,
    recovery_session_id uuid NOT NULL REFERENCES recovery_sessions (id) ON DELETE CASCADE,
    challenge           bytea NOT NULL CHECK (length(challenge) = 32),
    created_at          timestamptz NOT NULL DEFAULT now(),
    expires_at          timestamptz NOT NULL,
    consumed_at         timestamptz
);

-- Recovery requests in a fixed window, per scope (start or verify, by email address or by
-- client address). Shared by every instance.
CREATE TABLE recovery_attempts (
    scope             text NOT NULL CHECK (scope IN ('start_email', 'start_client', 'verify_email', 'verify_client')),
    subject           text NOT NULL,
    attempts          integer NOT NULL,
    window_started_at timestamptz NOT NULL,
    PRIMARY KEY (scope, subject)
);

-- Password sign-ins of the account, for the passwordless policy's "create a passkey" prompt.
ALTER TABLE accounts ADD COLUMN password_sign_ins integer NOT NULL DEFAULT 0;
