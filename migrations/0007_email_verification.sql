-- One-time codes that prove an address reaches the account holder. The code itself is never
-- stored: code_digest = SHA-256(code_salt || code), with a random salt per row, so that the
-- table alone does not reveal a code (a six-digit code without a salt would be found by
-- hashing all million candidates once). A new code for an address replaces the unused old
-- one; a code is dead once consumed, expired, or after too many wrong guesses.
CREATE TABLE email_verification_codes (
    id               uuid PRIMARY KEY,
    account_email_id uuid NOT NULL REFERENCES account_emails (id) ON DELETE CASCADE,
    code_salt        bytea NOT NULL CHECK (length(code_salt) = 16),
    code_digest      bytea NOT NULL CHECK (length(code_digest) = 32),
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    consumed_at      timestamptz
);
CREATE INDEX email_verification_codes_email ON email_verification_codes (account_email_id, created_at);
