#!/usr/bin/env python3
"""Authorization codes from a configured Glewlwyd for the code-exchange benchmark: signs in
as benchuser, grants the client its scopes, then runs N authorization requests and prints
one code per line. Usage: GLEW_BASE=http://127.0.0.1:PORT/api codes.py PLUGIN CLIENT N
session.py reuses the sign-in and the authorization request."""
import http.client, json, os, sys, urllib.parse

REDIRECT_URI = "http://127.0.0.1:9/cb"
SESSION_COOKIE = "GLEWLWYD2_SESSION_ID"
base = urllib.parse.urlsplit(os.environ["GLEW_BASE"])
conn = http.client.HTTPConnection(base.hostname, base.port, timeout=30)
cookie = ""

def call(method, path, body=None):
    global cookie
    headers = {"Content-Type": "application/json"}
    if cookie:
        headers["Cookie"] = cookie
    conn.request(method, base.path + path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = conn.getresponse()
    r.read()
    for name, value in r.getheaders():
        if name.lower() == "set-cookie" and value.startswith(SESSION_COOKIE + "="):
            cookie = value.split(";", 1)[0]
    return r

def sign_in(client, scope):
    """A session for benchuser whose consent to `scope` for `client` is already given, so that
    the authorization endpoint answers with a redirect at once; returns the cookie `name=value`."""
    assert call("POST", "/auth/", {"username": "benchuser", "password": "bench-user-password"}).status == 200
    assert call("PUT", f"/auth/grant/{client}", {"scope": scope}).status == 200
    return cookie

def authorization_path(plugin, client, scope, code_challenge=None):
    """The authorization request (path and query under GLEW_BASE); `g_continue` tells Glewlwyd to
    go on with the current session instead of showing its sign-in page."""
    params = {"response_type": "code", "client_id": client, "redirect_uri": REDIRECT_URI,
              "scope": scope, "nonce": "n", "state": "s"}
    if code_challenge:
        params.update(code_challenge=code_challenge, code_challenge_method="S256")
    return f"/{plugin}/auth?" + urllib.parse.urlencode(params) + "&g_continue"

def authorize(path):
    """One authorization request with the session; the code, or exit with the answer."""
    r = call("GET", path)
    location = r.getheader("Location") or ""
    code = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query).get("code")
    if r.status != 302 or not code:
        sys.exit(f"authorization failed: {r.status} {location[:200]}")
    return code[0]

if __name__ == "__main__":
    plugin, client, count = sys.argv[1], sys.argv[2], min(int(sys.argv[3]), 100000)
    sign_in(client, "openid api1")
    path = authorization_path(plugin, client, "openid api1")
    for _ in range(count):
        print(authorize(path))
