-- Pushed authorization requests (RFC 9126) and the one-time ids of signed request objects
-- (RFC 9101).
--
-- A pushed request is named by `urn:ietf:params:oauth:request_uri:<random>`; only the SHA-256
-- digest of the random part is stored. `parameters` is the request as the client pushed it
-- (form-encoded, client authentication removed). It must reach /authorize before
-- `expires_at`; its first use there (`first_used_at`) moves `expires_at` to the end of the
-- sign-in window and binds it to that browser, and the code that ends the request marks it
-- `consumed_at` in the same transaction.
CREATE TABLE pushed_authorization_requests (
    reference_digest bytea PRIMARY KEY CHECK (length(reference_digest) = 32),
    client_id        text NOT NULL,
    parameters       text NOT NULL,
    -- The parameters came from a verified request object (require_signed_request_object).
    request_object_signed boolean NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    first_used_at    timestamptz,
    -- SHA-256 of the browser's binding cookie, set at the first use: later passes (sign-in,
    -- consent) must come from the same browser.
    browser_digest   bytea CHECK (length(browser_digest) = 32),
    consumed_at      timestamptz
);
CREATE INDEX pushed_authorization_requests_expires ON pushed_authorization_requests (expires_at);

-- The `jti` of each request object that carried one, until the object expires: a replayed
-- request object is refused (RFC 9101 §10.1, FAPI 2.0 Message Signing).
CREATE TABLE request_object_ids (
    client_id  text NOT NULL,
    jti        text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (client_id, jti)
);
CREATE INDEX request_object_ids_expires ON request_object_ids (expires_at);
