-- Password lock-outs per account. Once an account's failures pass the limit, its password is
-- locked until locked_until (the client address scope never locks); lockouts counts the
-- lock-outs in a row, each twice as long as the one before up to a cap, and is forgotten after
-- a quiet period. '-infinity': never locked.
ALTER TABLE sign_in_failures
    ADD COLUMN locked_until timestamptz NOT NULL DEFAULT '-infinity',
    ADD COLUMN lockouts     integer     NOT NULL DEFAULT 0;
