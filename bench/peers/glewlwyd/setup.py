#!/usr/bin/env python3
"""Configure a running Glewlwyd 2.7.5 (GLEW_BASE, e.g. http://127.0.0.1:PORT/api) through its admin REST API.

Creates: scope api1; OIDC plugin instances 'oidc' (RS256, RSA-2048) and 'oidces' (ES256, P-256);
confidential clients 'bench-pw' (hashed client password -> bcrypt via pgcrypto on PostgreSQL)
and 'bench-secret' (client_secret, stored as-is); user 'benchuser' with password.
Idempotent-ish: deletes objects of the same name first. Stdlib only.
"""
import json, os, sys, urllib.request, http.cookiejar

BASE = os.environ["GLEW_BASE"]
HERE = os.path.dirname(os.path.abspath(__file__))
cj = http.cookiejar.CookieJar()
op = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cj))

def call(method, path, body=None, ok=(200,)):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        r = op.open(req, timeout=30); code, txt = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        code, txt = e.code, e.read().decode()
    if code not in ok:
        print(f"{method} {path} -> {code} {txt[:500]}", file=sys.stderr); sys.exit(1)
    print(f"{method} {path} -> {code}")
    return txt

KEYDIR = os.environ["KEYDIR"]
def key(name): return open(os.path.join(KEYDIR, name)).read()

call("POST", "/auth/", {"username": "admin", "password": "password"})

call("DELETE", "/scope/api1", ok=(200, 404))
call("POST", "/scope/", {"name": "api1", "display_name": "API 1", "description": "bench scope",
                         "password_required": True, "password_max_age": 0, "scheme": {}})

common = {
    "access-token-duration": 3600, "refresh-token-duration": 1209600, "code-duration": 600,
    "refresh-token-rolling": True, "allow-non-oidc": True,
    "auth-type-code-enabled": True, "auth-type-token-enabled": True, "auth-type-none-enabled": True,
    "auth-type-password-enabled": True, "auth-type-client-enabled": True,
    "auth-type-refresh-enabled": True, "auth-type-device-enabled": False,
    "subject-type": "public", "jwks-show": True, "jwks-x5c": [],
    "scope": [], "allowed-scope": ["openid", "api1"],
    "name-claim": "on-demand", "email-claim": "no", "scope-claim": "no", "claims": [],
    "pkce-allowed": True, "introspection-revocation-allowed": False,
}
for name, jt, kf, pf in (("oidc", "rsa", "rsa2048.key", "rsa2048.pub.pem"),
                         ("oidces", "ecdsa", "ec256.key", "ec256.pub.pem")):
    call("DELETE", f"/mod/plugin/{name}", ok=(200, 404))
    params = dict(common, iss=f"{BASE}/{name}", **{"jwt-type": jt, "jwt-key-size": "256",
                  "key": key(kf), "cert": key(pf)})
    call("POST", "/mod/plugin/", {"module": "oidc", "name": name, "display_name": f"OIDC {jt} 256",
                                  "enabled": True, "parameters": params})

for cid, cred in (("bench-pw", {"password": "bench-client-password"}),
                  ("bench-secret", {"client_secret": "bench-client-secret"})):
    call("DELETE", f"/client/{cid}", ok=(200, 404))
    call("POST", "/client/", dict({"client_id": cid, "name": cid, "description": "bench client",
                                   "confidential": True, "enabled": True,
                                   "redirect_uri": ["http://127.0.0.1:9/cb"],
                                   "authorization_type": ["code", "client_credentials", "password", "refresh_token"],
                                   "token_endpoint_auth_method": ["client_secret_basic", "client_secret_post"],
                                   "scope": ["api1"]}, **cred))

call("DELETE", "/user/benchuser", ok=(200, 404))
call("POST", "/user/", {"username": "benchuser", "name": "Bench User", "email": "bench@example.invalid",
                        "enabled": True, "scope": ["openid", "api1", "g_profile"], "password": "bench-user-password"})
print("setup done")
