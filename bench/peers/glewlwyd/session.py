#!/usr/bin/env python3
"""What `auth-bench codeflow` needs to run Glewlwyd's code flow with a session: signs in as
benchuser, grants the client scope `openid` (consent given, so the authorization endpoint
redirects with a code at once), checks one authorization request, and prints

    cookie NAME=VALUE      (one line per cookie of the session)
    authorize URL          (the full authorization URL, its code_challenge fixed if one is given)

Usage: GLEW_BASE=http://127.0.0.1:PORT/api session.py PLUGIN CLIENT [CODE_CHALLENGE]
CODE_CHALLENGE is an S256 challenge (RFC 7636 §4.2): the same verifier then works for every flow."""
import sys

import codes

plugin, client = sys.argv[1], sys.argv[2]
challenge = sys.argv[3] if len(sys.argv) > 3 else None
cookie = codes.sign_in(client, "openid")
path = codes.authorization_path(plugin, client, "openid", challenge)
codes.authorize(path)
print(f"cookie {cookie}")
print(f"authorize {codes.base.scheme}://{codes.base.netloc}{codes.base.path}{path}")
