-- OAuth 2.0 / OpenID Connect state: pending authorization requests, authorization codes,
-- refresh-token families, issued access tokens, consents, client assertion ids, the clients
-- each browser session signed in to, and the back-channel logout queue. Codes and tokens
-- are stored as SHA-256 digests only.

-- An authorization request that had to wait for the user (sign-in or consent). Only its
-- arrival time is kept: an authentication counts as fresh for prompt=login and max_age only
-- if it is later. Bound to the request's parameters by their digest, so the id cannot be
-- moved to another request.
CREATE TABLE authorization_requests (
    id                uuid PRIMARY KEY,
    parameters_digest bytea NOT NULL CHECK (length(parameters_digest) = 32),
    received_at       timestamptz NOT NULL DEFAULT now(),
    expires_at        timestamptz NOT NULL
);
CREATE INDEX authorization_requests_expires ON authorization_requests (expires_at);

CREATE TABLE authorization_codes (
    id             uuid PRIMARY KEY,
    code_digest    bytea NOT NULL UNIQUE CHECK (length(code_digest) = 32),
    client_id      text NOT NULL,
    redirect_uri   text NOT NULL,
    code_challenge text,
    nonce          text,
    scopes         text[] NOT NULL,
    id_token_claims text[] NOT NULL DEFAULT '{}',
    account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    session_id     uuid,
    auth_time      timestamptz NOT NULL,
    amr            text[] NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    consumed_at    timestamptz
);
CREATE INDEX authorization_codes_expires ON authorization_codes (expires_at);

-- One family per authorization: every rotation adds a token to it; reuse of a rotated token
-- revokes the whole family (RFC 9700 §4.14.2).
CREATE TABLE refresh_token_families (
    id                 uuid PRIMARY KEY,
    client_id          text NOT NULL,
    account_id         uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    session_id         uuid,
    authorization_code_id uuid,
    scopes             text[] NOT NULL,
    auth_time          timestamptz NOT NULL,
    amr                text[] NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    absolute_expires_at timestamptz NOT NULL,
    revoked_at         timestamptz,
    revoked_reason     text
);
CREATE INDEX refresh_token_families_account_client ON refresh_token_families (account_id, client_id);
CREATE INDEX refresh_token_families_code ON refresh_token_families (authorization_code_id);

CREATE TABLE refresh_tokens (
    token_digest bytea PRIMARY KEY CHECK (length(token_digest) = 32),
    family_id    uuid NOT NULL REFERENCES refresh_token_families (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- Idle end: a token unused this long is dead even if the family lives on.
    expires_at   timestamptz NOT NULL,
    rotated_at   timestamptz
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

-- Every access token issued (JWTs are otherwise self-contained): lets /revoke, /introspect
-- and /userinfo refuse a revoked one, and code replay revoke what the code produced.
CREATE TABLE access_tokens (
    jti        text PRIMARY KEY,
    client_id  text NOT NULL,
    account_id uuid REFERENCES accounts (id) ON DELETE CASCADE,
    family_id  uuid,
    authorization_code_id uuid,
    scopes     text[] NOT NULL,
    issued_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX access_tokens_expires ON access_tokens (expires_at);
CREATE INDEX access_tokens_family ON access_tokens (family_id);
CREATE INDEX access_tokens_code ON access_tokens (authorization_code_id);

CREATE TABLE consents (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    client_id  text NOT NULL,
    scopes     text[] NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, client_id)
);

-- private_key_jwt assertion ids, kept until the assertion expires (RFC 7523 §3 item 7).
CREATE TABLE client_assertion_ids (
    client_id  text NOT NULL,
    jti        text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (client_id, jti)
);
CREATE INDEX client_assertion_ids_expires ON client_assertion_ids (expires_at);

-- The clients a browser session signed in to: who gets a back-channel logout token, at the
-- client's backchannel_logout_uri as configured when the session signed in to it.
CREATE TABLE session_clients (
    session_id uuid NOT NULL REFERENCES authentication_sessions (id) ON DELETE CASCADE,
    client_id  text NOT NULL,
    account_id uuid NOT NULL,
    backchannel_logout_uri text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, client_id)
);

-- Back-channel logout deliveries, retried with backoff by a worker on any instance; a due
-- row is claimed with FOR UPDATE SKIP LOCKED so two instances never send the same one at
-- once. The logout token is signed at each attempt, so it is always fresh.
CREATE TABLE backchannel_logout_deliveries (
    id              uuid PRIMARY KEY,
    client_id       text NOT NULL,
    uri             text NOT NULL,
    account_id      uuid NOT NULL,
    session_id      uuid NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    abandoned_at    timestamptz,
    last_status     integer
);
CREATE INDEX backchannel_logout_deliveries_due ON backchannel_logout_deliveries (next_attempt_at)
    WHERE delivered_at IS NULL AND abandoned_at IS NULL;

-- However a session ends (RP-initiated logout, the sign-out button, revoking it from the
-- account page), the clients it signed in to are told, in the same transaction.
CREATE FUNCTION queue_backchannel_logout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO backchannel_logout_deliveries (id, client_id, uri, account_id, session_id)
    SELECT gen_random_uuid(), client_id, backchannel_logout_uri, account_id, session_id
    FROM session_clients
    WHERE session_id = NEW.id AND backchannel_logout_uri IS NOT NULL;
    RETURN NEW;
END;
$$;

CREATE TRIGGER authentication_sessions_ended
    AFTER UPDATE OF revoked_at ON authentication_sessions
    FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
    EXECUTE FUNCTION queue_backchannel_logout();
