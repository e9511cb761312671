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
