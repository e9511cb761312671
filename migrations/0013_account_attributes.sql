-- Roles and groups an operator assigns to an account (`auth-server users roles|groups`). Each
-- API (configured resource) chooses which of them its access tokens carry as claims.
CREATE TABLE account_attributes (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind IN ('role', 'group')),
    name       text NOT NULL CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, kind, name)
);
