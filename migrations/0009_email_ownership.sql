-- migrate: no-transaction
-- migrate: previous-checksum 9f953ca9aba3da178850dffa28d65c005432d45bebe3dc3f7fe4e505714c63f0
-- An address belongs to the account that verified it. Several accounts may hold the same
-- address unverified (so that signing up first with someone else's address does not lock the
-- real owner out, and so that a sign-up does not reveal whether an address has an account);
-- the first to verify it wins and the other holders lose it in the same transaction.
--
-- Written to run beside traffic (see "Writing a migration" in docs/operations.md); the checksum
-- above is its first form, one transaction that held account_emails locked while its indexes were
-- built. Databases that applied it hold the same schema. The new indexes come first, so
-- uniqueness is only ever stricter than the rule until the old constraint goes.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS account_emails_verified_address ON account_emails (normalized_email)
    WHERE verified_at IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS account_emails_address ON account_emails (normalized_email, created_at);
ALTER TABLE account_emails DROP CONSTRAINT IF EXISTS account_emails_normalized_email_key;

-- The link in a verification message carries a 128-bit random token, not the six-digit code;
-- only its SHA-256 digest is stored. Codes issued before this migration have none: their links
-- stop working, their codes still work on the account page.
ALTER TABLE email_verification_codes
    ADD COLUMN IF NOT EXISTS link_digest bytea,
    DROP CONSTRAINT IF EXISTS email_verification_codes_link_digest_check,
    ADD CONSTRAINT email_verification_codes_link_digest_check CHECK (length(link_digest) = 32) NOT VALID;
ALTER TABLE email_verification_codes VALIDATE CONSTRAINT email_verification_codes_link_digest_check;
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS email_verification_codes_link_digest_key
    ON email_verification_codes (link_digest);
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'email_verification_codes_link_digest_key'
                   AND conrelid = 'email_verification_codes'::regclass) THEN
        ALTER TABLE email_verification_codes ADD CONSTRAINT email_verification_codes_link_digest_key
            UNIQUE USING INDEX email_verification_codes_link_digest_key;
    END IF;
END
$$;

-- Guesses at verification codes in a fixed window, per account and per normalized address.
-- Unlike the attempt count of one code, these survive a resend.
CREATE TABLE IF NOT EXISTS email_verification_guesses (
    scope             text NOT NULL CHECK (scope IN ('account', 'address')),
    subject           text NOT NULL,
    guesses           integer NOT NULL,
    window_started_at timestamptz NOT NULL,
    PRIMARY KEY (scope, subject)
);

-- Sign-ups in a fixed window per normalized address (whether or not it has an account) and per
-- client address.
CREATE TABLE IF NOT EXISTS sign_up_attempts (
    scope             text NOT NULL CHECK (scope IN ('email', 'client')),
    subject           text NOT NULL,
    attempts          integer NOT NULL,
    window_started_at timestamptz NOT NULL,
    PRIMARY KEY (scope, subject)
);
