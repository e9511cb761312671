/// The first forms of migrations that were later rewritten to run beside traffic, byte for byte:
/// databases that applied them recorded these checksums (`-- migrate: previous-checksum`), and a
/// database migrated with them must end with the schema the rewritten files leave.
enum FirstFormMigrations {
    static let files: [String: String] = [
        "0006_operations.sql": operations,
        "0009_email_ownership.sql": emailOwnership,
        "0011_session_bound_tokens.sql": sessionBoundTokens,
        "0015_profile.sql": profile,
        "0016_resources.sql": resources,
        "0023_apple_notifications.sql": appleNotifications,
        "0024_email_change.sql": emailChange,
    ]

    static let operations = #"""
        -- Operations: an operator can disable an account without deleting it. A disabled account
        -- cannot sign in, its sessions no longer count, and its tokens are refused; enabling it again
        -- restores sign-in (sessions and tokens revoked at disable time stay revoked).
        ALTER TABLE accounts ADD COLUMN disabled_at timestamptz;

        -- Account deletion and the operator's views look these rows up by account.
        CREATE INDEX authorization_codes_account ON authorization_codes (account_id);
        CREATE INDEX access_tokens_account ON access_tokens (account_id) WHERE account_id IS NOT NULL;
        CREATE INDEX passkey_registration_challenges_account ON passkey_registration_challenges (account_id);
        CREATE INDEX session_clients_account ON session_clients (account_id);
        CREATE INDEX backchannel_logout_deliveries_account ON backchannel_logout_deliveries (account_id);

        """#

    static let emailOwnership = #"""
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

        """#

    static let sessionBoundTokens = #"""
        -- Tokens issued under a browser session end with it, unless the user granted offline_access.
        --
        -- access_tokens.session_id: the session an access token was issued under (NULL for
        -- client_credentials and for tokens issued before this migration).
        ALTER TABLE access_tokens ADD COLUMN session_id uuid;
        CREATE INDEX access_tokens_session ON access_tokens (session_id) WHERE session_id IS NOT NULL;
        CREATE INDEX refresh_token_families_session ON refresh_token_families (session_id)
            WHERE session_id IS NOT NULL AND revoked_at IS NULL;

        -- However a session ends (RP-initiated logout, the sign-out button, revoking it from the
        -- account page, signing in again in the same browser), in the same transaction: the
        -- refresh-token families issued under it are revoked unless they were granted
        -- offline_access, and so are the access tokens issued under it that do not belong to a
        -- family still live.
        CREATE FUNCTION revoke_session_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE refresh_token_families SET revoked_at = now(), revoked_reason = 'session_ended'
            WHERE session_id = NEW.id AND revoked_at IS NULL AND NOT ('offline_access' = ANY (scopes));
            UPDATE access_tokens a SET revoked_at = now()
            WHERE a.session_id = NEW.id AND a.revoked_at IS NULL
              AND NOT EXISTS (
                  SELECT 1 FROM refresh_token_families f WHERE f.id = a.family_id AND f.revoked_at IS NULL);
            RETURN NEW;
        END;
        $$;

        CREATE TRIGGER authentication_sessions_ended_revoke_tokens
            AFTER UPDATE OF revoked_at ON authentication_sessions
            FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
            EXECUTE FUNCTION revoke_session_tokens();

        """#

    static let profile = #"""
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

        """#

    static let resources = #"""
        -- APIs (resource servers) as configured resources (RFC 8707, RFC 9068, RFC 7662).
        -- A grant remembers the APIs it covers; each access token records its audience, and an
        -- opaque access token (for APIs configured with "format": "opaque") its SHA-256 digest.

        ALTER TABLE authorization_codes ADD COLUMN resources text[] NOT NULL DEFAULT '{}';
        ALTER TABLE refresh_token_families ADD COLUMN resources text[] NOT NULL DEFAULT '{}';

        -- NULL audience: a token for this server's own endpoints (userinfo).
        ALTER TABLE access_tokens ADD COLUMN audience text;
        ALTER TABLE access_tokens ADD COLUMN token_digest bytea;
        CREATE UNIQUE INDEX access_tokens_token_digest ON access_tokens (token_digest) WHERE token_digest IS NOT NULL;

        """#

    static let appleNotifications = #"""
        -- Sign in with Apple server-to-server notifications: the `jti` of each one acted on, so a
        -- notification delivered twice (Apple retries, or someone replays a captured body) acts once.
        -- Kept until its `iat` is older than the verifier accepts anyway; the maintenance pass purges
        -- the rest. Only the SHA-256 digest of the jti is stored.
        CREATE TABLE apple_notification_ids (
            jti_digest bytea PRIMARY KEY CHECK (length(jti_digest) = 32),
            expires_at timestamptz NOT NULL
        );
        CREATE INDEX apple_notification_ids_expires ON apple_notification_ids (expires_at);

        -- The client id Apple issued an identity's refresh token to (an app's bundle id for a native
        -- sign-in; NULL: the Services ID of the web flow): Apple revokes a token only for its client.
        ALTER TABLE upstream_identities ADD COLUMN refresh_token_client_id text
            CHECK (length(refresh_token_client_id) <= 255);

        -- The mailer asks whether a recipient is a relay address Apple reported undeliverable.
        CREATE INDEX upstream_identities_undeliverable ON upstream_identities (lower(email))
            WHERE NOT email_deliverable;

        """#

    static let emailChange = #"""
        -- An account's change of address, waiting for the new address to be confirmed: the new address
        -- replaces the old one only when the code mailed to it (or the link's token) comes back. Codes
        -- are kept as salted digests and link tokens as digests, as for email verification. One change
        -- at a time per account; a new request replaces the pending one.
        CREATE TABLE email_changes (
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
        CREATE INDEX email_changes_expires ON email_changes (expires_at);

        -- After a change, the old address is told, with a link that restores it and ends every session
        -- for a few days (email_verification.change_undo_days): whoever took over the account and
        -- changed the address loses it again. Only the token's SHA-256 digest is stored.
        CREATE TABLE email_change_undos (
            id                   uuid PRIMARY KEY,
            account_id           uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
            account_email_id     uuid NOT NULL REFERENCES account_emails (id) ON DELETE CASCADE,
            old_email            text NOT NULL,
            old_normalized_email text NOT NULL,
            old_verified_at      timestamptz,
            token_digest         bytea NOT NULL UNIQUE CHECK (length(token_digest) = 32),
            created_at           timestamptz NOT NULL DEFAULT now(),
            expires_at           timestamptz NOT NULL,
            used_at              timestamptz
        );
        CREATE INDEX email_change_undos_account ON email_change_undos (account_id);
        CREATE INDEX email_change_undos_expires ON email_change_undos (expires_at);

        """#
}
