-- migrate: no-transaction
-- Apple's refresh tokens are revoked at Apple when their link ends (the account is deleted, or
-- its holder unlinks Apple), as Apple requires; and every client hears of a deleted account.
--
-- Written to run beside traffic (see "Writing a migration" in docs/operations.md): each
-- statement locks one table briefly (catalogue only, no rewrite, no scan), and the file may
-- run again.

-- 1. A link that waits for its user to prove control of the account names the id the identity
--    will have once linked (`identity_id`): Apple's refresh token waits under that id in the
--    revocation queue below, due when the link expires, and the link takes it from there.
ALTER TABLE upstream_pending_links ADD COLUMN IF NOT EXISTS identity_id uuid;

-- 2. Revocations at the provider, queued in the transaction that ends the link (or that
--    leaves a token no identity holds), so that one survives a restart and the provider being
--    unreachable: a worker on any instance claims a due row with FOR UPDATE SKIP LOCKED, and
--    retries with backoff. The token stays sealed under its identity's id (`identity_id`);
--    `client_id` is the client id Apple issued it to (NULL: the Services ID). A row goes once
--    the provider has revoked the token, or after the last attempt.
CREATE TABLE IF NOT EXISTS upstream_token_revocations (
    id               uuid PRIMARY KEY,
    identity_id      uuid NOT NULL,
    issuer           text NOT NULL,
    client_id        text CHECK (length(client_id) <= 255),
    token_ciphertext bytea NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS upstream_token_revocations_due ON upstream_token_revocations (next_attempt_at);
CREATE INDEX IF NOT EXISTS upstream_token_revocations_identity ON upstream_token_revocations (identity_id);

-- 3. A deleted account's back-channel logout also reaches the clients that hold its tokens
--    outside any browser session (token exchange; offline access after the session ended):
--    their logout token names the subject only (Back-Channel Logout 1.0 §2.4).
ALTER TABLE backchannel_logout_deliveries ALTER COLUMN session_id DROP NOT NULL;
