-- Scenario 5, passkey sign-in: the statements of POST /api/passkeys/authentication/start
-- and /finish as the server runs them: the challenge (asynchronous commit); its consumption,
-- the passkey lookup and the details the page signals to the passkey provider in one
-- autocommit statement; then the passkey's use, the session (starting at the consumption's
-- time), and the audit event in one transaction (PasskeyStore, SessionStore.create,
-- AuditLog.record), sent as the server sends them: all three are queued
-- (PostgresConnection.queue) and go with BEGIN and COMMIT in one pipeline. The challenge's and
-- the session's ids are version 7 UUIDs and the session's key leads with its time, as the
-- server's are (TimeAndRandomness.timeOrderedUUID, TimeOrderedToken.key).
\set c random(0, :passkeys - 1)
INSERT INTO passkey_authentication_challenges (id, challenge, expires_at)
SELECT (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid,
       sha256(convert_to(random()::text, 'UTF8')), now() + make_interval(secs => 300::float8)
FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
RETURNING id AS challenge_id \gset
WITH challenge AS (
    UPDATE passkey_authentication_challenges SET consumed_at = now()
    WHERE id = :challenge_id AND consumed_at IS NULL AND expires_at > now()
    RETURNING challenge
)
SELECT (SELECT challenge FROM challenge) AS consumed_challenge, now() AS now, found.*
FROM (SELECT 1) AS one
LEFT JOIN (
    SELECT c.id AS passkey_id, c.account_id, c.credential_id, c.public_key, c.sign_count, c.backup_eligible, c.backed_up,
           c.transports, c.aaguid, c.name, c.created_at, c.last_used_at, a.webauthn_user_handle,
           a.disabled_at IS NOT NULL AS account_disabled, a.display_name,
           (SELECT email FROM account_emails WHERE account_id = a.id ORDER BY created_at, id LIMIT 1) AS email,
           ARRAY(SELECT encode(o.credential_id, 'hex') FROM passkey_credentials o WHERE o.account_id = a.id
                 ORDER BY o.created_at, o.id) AS credential_ids
    FROM passkey_credentials c JOIN accounts a ON a.id = c.account_id
    WHERE c.credential_id = sha256(convert_to('bench-cred-' || :c, 'UTF8'))
) AS found ON true \gset
\startpipeline
BEGIN ISOLATION LEVEL READ COMMITTED;
UPDATE passkey_credentials SET sign_count = GREATEST(sign_count, 0), backed_up = false, last_used_at = now() WHERE id = :passkey_id;
INSERT INTO authentication_sessions
    (id, account_id, token_digest, amr, auth_time, expires_at, idle_timeout_seconds, user_agent, client_address, from_recovery)
VALUES ((lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid, :account_id,
        decode(lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0'), 'hex')
        || substring(sha256(convert_to(gen_random_uuid()::text, 'UTF8')) FROM 1 FOR 26), '{hwk,user,mfa}', :now::timestamptz,
        :now::timestamptz + make_interval(secs => 2592000::float8), 604800, 'pgbench', '127.0.0.1', false);
INSERT INTO audit_events (event, actor, account_id, client_id, client_address, detail)
VALUES ('sign_in.succeeded', 'user', :account_id, NULL, '127.0.0.1', '{"method":"passkey"}'::jsonb);
COMMIT;
\endpipeline
