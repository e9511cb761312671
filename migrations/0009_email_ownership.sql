-- An address belongs to the account that verified it. Several accounts may hold the same
-- address unverified (so that signing up first with someone else's address does not lock the
-- real owner out, and so that a sign-up does not reveal whether an address has an account);
-- the first to verify it wins and the other holders lose it in the same transaction.
ALTER TABLE account_emails DROP CONSTRAINT account_emails_normalized_email_key;
CREATE UNIQUE INDEX account_emails_verified_address ON account_emails (normalized_email)
    WHERE verified_at IS NOT NULL;
CREATE INDEX account_emails_address ON account_emails (normalized_email, created_at);

-- The link in a verification message carries a 128-bit random token, not the six-digit code;
-- only its SHA-256 digest is stored. Codes issued before this migration have none: their links
-- stop working, their codes still work on the account page.
ALTER TABLE email_verification_codes ADD COLUMN link_digest bytea UNIQUE CHECK (length(link_digest) = 32);

-- Guesses at verification codes in a fixed window, per account and per normalized address.
-- Unlike the attempt count of one code, these survive a resend.
CREATE TABLE email_verification_guesses (
    scope             text NOT NULL CHECK (scope IN ('account', 'address')),
    subject           text NOT NULL,
    guesses           integer NOT NULL,
    window_started_at timestamptz NOT NULL,
    PRIMARY KEY (scope, subject)
);

-- Sign-ups in a fixed window per normalized address (whether or not it has an account) and per
-- client address.
CREATE TABLE sign_up_attempts (
    scope             text NOT NULL CHECK (scope IN ('email', 'client')),
    subject           text NOT NULL,
    attempts          integer NOT NULL,
    window_started_at timestamptz NOT NULL,
    PRIMARY KEY (scope, subject)
);
