-- migrate: no-transaction
-- migrate: previous-checksum 2c106b911ddc63190f2eed2c11de5b47fe9f893265258e21f25bd032a1bf061b
-- Profile claims an operator or the account holder fills in (OpenID Connect Core §5.1), and the
-- time the released profile last changed: the `updated_at` claim. NULL means "not set": such a
-- claim is omitted from ID tokens and userinfo. The CHECKs repeat the rules of `ProfileFields`
-- (lengths in characters, as PostgreSQL counts them).
--
-- Written to run beside traffic on a large accounts table (see "Writing a migration" in
-- docs/operations.md): each statement commits on its own and may run again. The checksum above is
-- the first form of this file, one transaction that held the table's ACCESS EXCLUSIVE lock while
-- it rewrote every row; databases that applied it hold the same schema.

-- New columns without a default are a catalogue change; the CHECKs are added NOT VALID (no scan
-- under the lock) and validated below.
ALTER TABLE accounts
    ADD COLUMN IF NOT EXISTS given_name         text,
    ADD COLUMN IF NOT EXISTS family_name        text,
    ADD COLUMN IF NOT EXISTS preferred_username text,
    -- A BCP 47 language tag (RFC 5646), e.g. ja-JP.
    ADD COLUMN IF NOT EXISTS locale             text,
    -- An absolute https URL without credentials.
    ADD COLUMN IF NOT EXISTS picture            text,
    ADD COLUMN IF NOT EXISTS profile_updated_at timestamptz,
    DROP CONSTRAINT IF EXISTS accounts_given_name_check,
    DROP CONSTRAINT IF EXISTS accounts_family_name_check,
    DROP CONSTRAINT IF EXISTS accounts_preferred_username_check,
    DROP CONSTRAINT IF EXISTS accounts_locale_check,
    DROP CONSTRAINT IF EXISTS accounts_picture_check,
    ADD CONSTRAINT accounts_given_name_check CHECK (length(given_name) BETWEEN 1 AND 200) NOT VALID,
    ADD CONSTRAINT accounts_family_name_check CHECK (length(family_name) BETWEEN 1 AND 200) NOT VALID,
    ADD CONSTRAINT accounts_preferred_username_check
        CHECK (length(preferred_username) BETWEEN 1 AND 64) NOT VALID,
    ADD CONSTRAINT accounts_locale_check
        CHECK (locale ~ '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$' AND length(locale) <= 64) NOT VALID,
    ADD CONSTRAINT accounts_picture_check
        CHECK (picture ~* '^https://[^/@?#]' AND length(picture) <= 2048) NOT VALID;

-- Accounts created from now on start with their creation time.
ALTER TABLE accounts ALTER COLUMN profile_updated_at SET DEFAULT now();

-- Every change of a released claim moves profile_updated_at in the statement that makes it, whichever
-- code path makes it: the account's own columns here …
CREATE OR REPLACE FUNCTION accounts_profile_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.display_name, NEW.given_name, NEW.family_name, NEW.preferred_username, NEW.locale, NEW.picture)
       IS DISTINCT FROM
       (OLD.display_name, OLD.given_name, OLD.family_name, OLD.preferred_username, OLD.locale, OLD.picture)
    THEN
        NEW.profile_updated_at := now();
    END IF;
    RETURN NEW;
END
$$;

-- … and the address with its verification (the email and email_verified claims): added, changed,
-- verified, or released to the account that verified it first.
CREATE OR REPLACE FUNCTION account_emails_profile_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (NEW.email, NEW.verified_at) IS NOT DISTINCT FROM (OLD.email, OLD.verified_at) THEN
        RETURN NULL;
    END IF;
    UPDATE accounts SET profile_updated_at = now()
    WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END;
    RETURN NULL;
END
$$;

-- The triggers come before the backfill, so a profile changed while it runs keeps its newer time.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'accounts_profile_changed'
                   AND tgrelid = 'accounts'::regclass) THEN
        CREATE TRIGGER accounts_profile_changed BEFORE UPDATE ON accounts
            FOR EACH ROW EXECUTE FUNCTION accounts_profile_changed();
    END IF;
END
$$;
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'account_emails_profile_changed'
                   AND tgrelid = 'account_emails'::regclass) THEN
        CREATE TRIGGER account_emails_profile_changed AFTER INSERT OR UPDATE OR DELETE ON account_emails
            FOR EACH ROW EXECUTE FUNCTION account_emails_profile_changed();
    END IF;
END
$$;

-- Until now the profile (the display name and the address) was what the account was created
-- with. Backfilled in primary-key order, 5000 rows per committed batch, so no account row stays
-- locked for long and no batch scans rows an earlier one already did.
DO $$
DECLARE
    done uuid := '00000000-0000-0000-0000-000000000000';
    upto uuid;
BEGIN
    LOOP
        SELECT id INTO upto FROM (SELECT id FROM accounts WHERE id > done ORDER BY id LIMIT 5000) batch
        ORDER BY id DESC LIMIT 1;
        EXIT WHEN upto IS NULL;
        UPDATE accounts SET profile_updated_at = created_at
        WHERE id > done AND id <= upto AND profile_updated_at IS NULL;
        COMMIT;
        done := upto;
    END LOOP;
END
$$;
-- Rows that an older server inserted behind the cursor before the default applied.
UPDATE accounts SET profile_updated_at = created_at WHERE profile_updated_at IS NULL;

-- NOT NULL through a validated CHECK: the validation scans without blocking writes, and SET NOT
-- NULL then trusts the CHECK instead of scanning under the ACCESS EXCLUSIVE lock.
ALTER TABLE accounts
    DROP CONSTRAINT IF EXISTS accounts_profile_updated_at_not_null,
    ADD CONSTRAINT accounts_profile_updated_at_not_null CHECK (profile_updated_at IS NOT NULL) NOT VALID;
ALTER TABLE accounts VALIDATE CONSTRAINT accounts_profile_updated_at_not_null;
ALTER TABLE accounts VALIDATE CONSTRAINT accounts_given_name_check;
ALTER TABLE accounts VALIDATE CONSTRAINT accounts_family_name_check;
ALTER TABLE accounts VALIDATE CONSTRAINT accounts_preferred_username_check;
ALTER TABLE accounts VALIDATE CONSTRAINT accounts_locale_check;
ALTER TABLE accounts VALIDATE CONSTRAINT accounts_picture_check;
ALTER TABLE accounts ALTER COLUMN profile_updated_at SET NOT NULL;
ALTER TABLE accounts DROP CONSTRAINT accounts_profile_updated_at_not_null;
