// Postgres: first code arrives with its issue.
