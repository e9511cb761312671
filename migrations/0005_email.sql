-- When the address was proven to reach the account holder; NULL until then. ID tokens and
-- userinfo report email_verified from it.
ALTER TABLE account_emails ADD COLUMN verified_at timestamptz;
