-- Profile claims an operator or the account holder fills in (OpenID Connect Core §5.1), and the
-- time the released profile last changed: the `updated_at` claim. NULL means "not set": such a
-- claim is omitted from ID tokens and userinfo. The CHECKs repeat the rules of `ProfileFields`
-- (lengths in characters, as PostgreSQL counts them).
ALTER TABLE accounts
    ADD COLUMN given_name         text CHECK (length(given_name) BETWEEN 1 AND 200),
    ADD COLUMN family_name        text CHECK (length(family_name) BETWEEN 1 AND 200),
    ADD COLUMN preferred_username text CHECK (length(preferred_username) BETWEEN 1 AND 64),
    -- A BCP 47 language tag (RFC 5646), e.g. ja-JP.
    ADD COLUMN locale             text CHECK (locale ~ '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$' AND length(locale) <= 64),
    -- An absolute https URL without credentials.
    ADD COLUMN picture            text CHECK (picture ~* '^https://[^/@?#]' AND length(picture) <= 2048),
    ADD COLUMN profile_updated_at timestamptz;

-- Until now the profile (the display name and the address) was what the account was created with.
UPDATE accounts SET profile_updated_at = created_at;
ALTER TABLE accounts
    ALTER COLUMN profile_updated_at SET DEFAULT now(),
    ALTER COLUMN profile_updated_at SET NOT NULL;

-- Every change of a released claim moves profile_updated_at in the statement that makes it, whichever
-- code path makes it: the account's own columns here …
CREATE FUNCTION accounts_profile_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER accounts_profile_changed BEFORE UPDATE ON accounts
    FOR EACH ROW EXECUTE FUNCTION accounts_profile_changed();

-- … and the address with its verification (the email and email_verified claims): added, changed,
-- verified, or released to the account that verified it first.
CREATE FUNCTION account_emails_profile_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (NEW.email, NEW.verified_at) IS NOT DISTINCT FROM (OLD.email, OLD.verified_at) THEN
        RETURN NULL;
    END IF;
    UPDATE accounts SET profile_updated_at = now()
    WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END;
    RETURN NULL;
END
$$;
CREATE TRIGGER account_emails_profile_changed AFTER INSERT OR UPDATE OR DELETE ON account_emails
    FOR EACH ROW EXECUTE FUNCTION account_emails_profile_changed();
