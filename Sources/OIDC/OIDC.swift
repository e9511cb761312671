// OIDC: first code arrives with its issue.
