-- The authorization challenge endpoint (draft-ietf-oauth-first-party-apps): one row per
-- sign-in a first-party native app runs without a browser. The app holds the `auth_session`
-- value; only its SHA-256 digest is stored, and every step replaces it (a value works for one
-- step). The row keeps what the final authorization code is issued for (client, PKCE challenge,
-- scopes, APIs, redirect URI), the DPoP key thumbprint the app bound the sign-in to, and the
-- WebAuthn ceremony in progress (an authentication challenge, or a sign-up registration).
CREATE TABLE authorization_challenge_sessions (
    id                      uuid PRIMARY KEY,
    session_digest          bytea NOT NULL UNIQUE CHECK (length(session_digest) = 32),
    client_id               text NOT NULL,
    code_challenge          text NOT NULL,
    scopes                  text[] NOT NULL,
    resources               text[] NOT NULL DEFAULT '{}',
    acr_values              text[] NOT NULL DEFAULT '{}',
    redirect_uri            text,
    dpop_jkt                text,
    passkey_challenge_id    uuid,
    registration_id         uuid,
    sign_up_email           text,
    sign_up_display_name    text,
    created_at              timestamptz NOT NULL DEFAULT now(),
    expires_at              timestamptz NOT NULL,
    completed_at            timestamptz
);
CREATE INDEX authorization_challenge_sessions_expires ON authorization_challenge_sessions (expires_at);

-- Its codes redirect nowhere (the draft's §6: the token request names no redirect URI), so a
-- code's redirect URI is optional; every code of /authorize still has one. Dropping NOT NULL
-- changes the catalogue only (a brief lock, no rewrite, no scan).
ALTER TABLE authorization_codes ALTER COLUMN redirect_uri DROP NOT NULL;
