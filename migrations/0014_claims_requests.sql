-- Claims requested through the `claims` authorization request parameter (OpenID Connect Core
-- §5.5) travel with what the code issues: the ID token claims with the refresh-token family
-- (ID tokens issued at refresh carry them again), the userinfo claims with the code, the
-- family and each access token (`/userinfo` looks the access token up by `jti`).
ALTER TABLE authorization_codes ADD COLUMN userinfo_claims text[] NOT NULL DEFAULT '{}';
ALTER TABLE refresh_token_families
    ADD COLUMN id_token_claims text[] NOT NULL DEFAULT '{}',
    ADD COLUMN userinfo_claims text[] NOT NULL DEFAULT '{}';
ALTER TABLE access_tokens ADD COLUMN userinfo_claims text[] NOT NULL DEFAULT '{}';
