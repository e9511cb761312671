-- Security events, for operators and for the people whose accounts they concern. Rows never
-- reference other tables: an event outlives the account, session or client it names, until the
-- retention period (audit.retention_days) prunes it. No secret is ever stored here.
CREATE TABLE audit_events (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurred_at    timestamptz NOT NULL DEFAULT now(),
    -- A dotted name from AuditEventKind, e.g. sign_in.succeeded.
    event          text NOT NULL CHECK (length(event) BETWEEN 1 AND 100),
    -- Who acted: user (through the pages or API), admin (through the CLI) or system.
    actor          text NOT NULL CHECK (actor IN ('user', 'admin', 'system')),
    account_id     uuid,
    client_id      text,
    client_address text NOT NULL DEFAULT '',
    -- Event-specific facts (method, reason, passkey name …) as a flat JSON object of strings.
    detail         jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_occurred ON audit_events (occurred_at);
CREATE INDEX audit_events_account ON audit_events (account_id, occurred_at) WHERE account_id IS NOT NULL;
