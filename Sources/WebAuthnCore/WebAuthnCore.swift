// WebAuthnCore: first code arrives with its issue.
