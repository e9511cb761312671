#!/usr/bin/env python3
"""Authorization codes from a configured Glewlwyd for the code-exchange benchmark: signs in
as benchuser, grants the client its scopes, then runs N authorization requests and prints
one code per line. Usage: GLEW_BASE=http://127.0.0.1:PORT/api codes.py PLUGIN CLIENT N"""
import http.client, json, os, sys, urllib.parse

base = urllib.parse.urlsplit(os.environ["GLEW_BASE"])
plugin, client, count = sys.argv[1], sys.argv[2], min(int(sys.argv[3]), 100000)
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
        if name.lower() == "set-cookie" and value.startswith("GLEWLWYD2_SESSION_ID="):
            cookie = value.split(";", 1)[0]
    return r

assert call("POST", "/auth/", {"username": "benchuser", "password": "bench-user-password"}).status == 200
assert call("PUT", f"/auth/grant/{client}", {"scope": "openid api1"}).status == 200
query = urllib.parse.urlencode({"response_type": "code", "client_id": client, "redirect_uri": "http://127.0.0.1:9/cb",
                                "scope": "openid api1", "nonce": "n", "state": "s"}) + "&g_continue"
for _ in range(count):
    r = call("GET", f"/{plugin}/auth?{query}")
    location = r.getheader("Location") or ""
    code = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query).get("code")
    if r.status != 302 or not code:
        sys.exit(f"authorization failed: {r.status} {location[:200]}")
    print(code[0])
