// Crypto: first code arrives with its issue.
