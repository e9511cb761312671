-- migrate: no-transaction
-- migrate: previous-checksum 553a1d35cb9bb51aa32fd162f2d1978824f0813e41adffe9f26944a52985f8e3
-- An account's change of address, waiting for the new address to be confirmed: the new address
-- replaces the old one only when the code mailed to it (or the link's token) comes back. Codes
-- are kept as salted digests and link tokens as digests, as for email verification. One change
-- at a time per account; a new request replaces the pending one.
CREATE TABLE IF NOT EXISTS email_changes (
    id                   uuid PRIMARY KEY,
    account_id           uuid NOT NULL UNIQUE REFERENCES accounts (id) ON DELETE CASCADE,
    new_email            text NOT NULL,
    new_normalized_email text NOT NULL,
    code_salt            bytea NOT NULL CHECK (length(code_salt) = 16),
    code_digest          bytea NOT NULL CHECK (length(code_digest) = 32),
    link_digest          bytea NOT NULL UNIQUE CHECK (length(link_digest) = 32),
    attempts             integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    created_at           timestamptz NOT NULL DEFAULT now(),
    expires_at           timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS email_changes_expires ON email_changes (expires_at);

-- After a change, the old address is told, with a link that restores it and ends every session
-- for a few days (email_verification.change_undo_days): whoever took over the account and
-- changed the address loses it again. Only the token's SHA-256 digest is stored.
CREATE TABLE IF NOT EXISTS email_change_undos (
    id                   uuid PRIMARY KEY,
    account_id           uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    account_email_id     uuid NOT NULL,
    old_email            text NOT NULL,
    old_normalized_email text NOT NULL,
    old_verified_at      timestamptz,
    token_digest         bytea NOT NULL UNIQUE CHECK (length(token_digest) = 32),
    created_at           timestamptz NOT NULL DEFAULT now(),
    expires_at           timestamptz NOT NULL,
    used_at              timestamptz
);
-- Its second foreign key in a statement of its own: a transaction that locked accounts and
-- account_emails together would hold the one while waiting for the other, against requests that
-- take them in the other order (adding an address updates its account through a trigger), and one
-- side would fail as a deadlock. (The checksum above is the first form of this file, one such
-- transaction; databases that applied it hold the same schema.)
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'email_change_undos_account_email_id_fkey'
                   AND conrelid = 'email_change_undos'::regclass) THEN
        ALTER TABLE email_change_undos ADD CONSTRAINT email_change_undos_account_email_id_fkey
            FOREIGN KEY (account_email_id) REFERENCES account_emails (id) ON DELETE CASCADE;
    END IF;
END
$$;
CREATE INDEX IF NOT EXISTS email_change_undos_account ON email_change_undos (account_id);
CREATE INDEX IF NOT EXISTS email_change_undos_expires ON email_change_undos (expires_at);
