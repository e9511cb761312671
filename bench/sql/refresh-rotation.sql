-- Scenario 3, refresh-token rotation: the statements TokenEndpoint.refresh runs through
-- OAuthStore (rotateRefreshToken, then recordIssued: the new refresh token and the access
-- token's record in one statement) in one transaction. Digests are computed here instead of
-- being bound from the server; the new refresh token's key and the jti lead with the time, as
-- the server's do (TimeOrderedToken.key, TimeAndRandomness.timeOrderedToken). Each
-- client walks its own pre-inserted tokens p-<client_id>-<k>.
-- The record goes with the COMMIT in one pipeline, as in the server (PostgresConnection.queue);
-- the server's BEGIN goes with the rotation, which pgbench cannot do (no \gset in a pipeline).
\set k :k + 1
BEGIN ISOLATION LEVEL READ COMMITTED;
WITH family AS (
    SELECT f.* FROM refresh_token_families f
    WHERE f.id = (SELECT family_id FROM refresh_tokens
                  WHERE token_digest = sha256(convert_to('p-' || :client_id || '-' || :k, 'UTF8')) AND rotated_at IS NULL)
    FOR SHARE
), rotated AS (
    UPDATE refresh_tokens t SET rotated_at = now()
    FROM family f
    WHERE t.token_digest = sha256(convert_to('p-' || :client_id || '-' || :k, 'UTF8')) AND t.rotated_at IS NULL AND f.id = t.family_id
    RETURNING f.id AS family_id, f.client_id AS family_client, f.account_id, f.session_id, f.scopes, f.auth_time, f.amr,
              (f.revoked_at IS NULL AND f.absolute_expires_at > now() AND t.expires_at > now()
               AND ('offline_access' = ANY (f.scopes) OR f.session_id IS NULL
                    OR EXISTS (SELECT 1 FROM authentication_sessions s
                               WHERE s.id = f.session_id AND revoked_at IS NULL AND expires_at > now() AND idle_expires_at > now()))) AS live,
              now() AS now
), touched AS (
    UPDATE authentication_sessions SET last_seen_at = now()
    WHERE id = (SELECT s.id FROM authentication_sessions s JOIN rotated r ON s.id = r.session_id
                WHERE r.live AND NOT ('offline_access' = ANY (r.scopes))
                  AND s.last_seen_at < now() - interval '1 minute'
                FOR UPDATE OF s SKIP LOCKED)
)
SELECT * FROM rotated \gset
\startpipeline
WITH family AS (
    INSERT INTO refresh_token_families
        (id, client_id, account_id, session_id, authorization_code_id, scopes, auth_time, amr, absolute_expires_at)
    SELECT gen_random_uuid(), :family_client, :account_id, NULL, NULL, '{openid}', now(), '{pwd}', now() + interval '30 days'
    WHERE false
    RETURNING id, absolute_expires_at
), refresh AS (
    INSERT INTO refresh_tokens (token_digest, family_id, expires_at)
    SELECT decode(lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0'), 'hex')
           || substring(sha256(convert_to(gen_random_uuid()::text, 'UTF8')) FROM 1 FOR 26), f.id, LEAST(now() + make_interval(secs => 2592000::float8), f.absolute_expires_at)
    FROM (SELECT id, absolute_expires_at FROM family
          UNION ALL
          SELECT id, absolute_expires_at FROM refresh_token_families WHERE id = :family_id AND NOT false) AS f
    WHERE '\x00'::bytea IS NOT NULL
)
INSERT INTO access_tokens (jti, client_id, account_id, family_id, authorization_code_id, scopes, expires_at)
VALUES (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || gen_random_uuid()::text, :family_client, :account_id, :family_id, NULL, '{openid}', now() + interval '1 hour');
COMMIT;
\endpipeline
