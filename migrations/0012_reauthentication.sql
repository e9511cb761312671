-- Re-authentication before credential changes (adding or removing a passkey, setting,
-- changing or removing the password): the session's auth_time must be recent.

-- A session opened by completing an account recovery: its sign-in was the recovery's one
-- step, so it never counts as recent for a further credential change until the user
-- re-authenticates with a passkey or the password.
ALTER TABLE authentication_sessions ADD COLUMN from_recovery boolean NOT NULL DEFAULT false;

-- The passkey challenge of a re-authentication: bound to the browser session that asked
-- for it, used once, so an assertion made for one session cannot refresh another.
CREATE TABLE reauthentication_challenges (
    id          uuid PRIMARY KEY,
    session_id  uuid NOT NULL REFERENCES authentication_sessions (id) ON DELETE CASCADE,
    challenge   bytea NOT NULL CHECK (length(challenge) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    consumed_at timestamptz
);
CREATE INDEX reauthentication_challenges_expires ON reauthentication_challenges (expires_at);
