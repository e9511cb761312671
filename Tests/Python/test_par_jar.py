"""Pushed authorization requests (RFC 9126) and signed request objects (RFC 9101) against a
real `auth-server serve`.

PAR: the client pushes its parameters to /par (authenticated like at /token), sends the browser
to /authorize with only `client_id` and the `request_uri`, and redeems the code with authlib.
JAR: the parameters travel in a JWT the client signed (PyJWT), at /authorize or in the pushed
body. The refusals come first: a reused, expired or another client's `request_uri`, a plain
/authorize for a client that must push, and request objects with a wrong signature, `aud`,
`exp` or `nbf`, or none at all."""

import base64
import hashlib
import json
import secrets
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import shutil
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

import jwt as pyjwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from conftest import Browser, hash_secret
from auth_server import ROOT, binary, free_port, serve
from dpop_client import DPoPKey

WEB = "par-web"
OTHER = "par-other"
REQUIRED = "par-required"
NATIVE = "par-native"
LIFETIME = 4  # oauth.pushed_request_lifetime_seconds: short, so that expiry is testable
URN = "urn:ietf:params:oauth:request_uri:"
JAR = "jar-web"
SIGNED_ONLY = "jar-signed-only"
LOOPBACK_URI = "jar-loopback-uri"
FAPI = "fapi2-web"
FAPI_REFRESH = "fapi2-refresh"
KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = ec.generate_private_key(ec.SECP256R1())


def public_jwk(key, kid):
    jwk = json.loads(pyjwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    return jwk | {"kid": kid, "use": "sig", "alg": "ES256"}


@pytest.fixture(scope="module")
def env():
    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix="auth-server-par-")
    Path(data_dir).chmod(0o755)  # the embedded cluster may run as the postgres user
    secret = "par-secret-" + uuid.uuid4().hex + uuid.uuid4().hex
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    web = {
        "application_type": "web", "redirect_uris": [redirect],
        "token_endpoint_auth_method": "client_secret_basic", "client_secret_hash": hash_secret(secret),
        "grant_types": ["authorization_code", "refresh_token"], "scope": "openid profile email offline_access",
    }
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(data_dir) / "var"),
        "public_dir": str(ROOT / "public"),
        # Codes live 5 minutes for other clients; a fapi2 client's are capped at 60 s.
        "oauth": {"pushed_request_lifetime_seconds": LIFETIME, "authorization_code_lifetime_seconds": 300},
        "clients": [
            web | {"client_id": WEB, "client_name": "PAR Web"},
            web | {"client_id": OTHER, "client_name": "PAR Other"},
            web | {"client_id": REQUIRED, "client_name": "PAR Required", "require_pushed_authorization_requests": True},
            web | {"client_id": JAR, "client_name": "JAR Web", "jwks": {"keys": [public_jwk(KEY, "k1")]}},
            web | {"client_id": SIGNED_ONLY, "client_name": "JAR Signed Only", "require_signed_request_object": True,
                   "jwks": {"keys": [public_jwk(KEY, "k1")]}},
            {"client_id": FAPI, "client_name": "FAPI 2.0 Web", "application_type": "web", "profile": "fapi2",
             "redirect_uris": [redirect], "token_endpoint_auth_method": "private_key_jwt",
             "jwks": {"keys": [public_jwk(KEY, "k1")]}, "grant_types": ["authorization_code"],
             "scope": "openid profile"},
            {"client_id": FAPI_REFRESH, "client_name": "FAPI 2.0 Refresh", "application_type": "web",
             "profile": "fapi2", "redirect_uris": [redirect], "token_endpoint_auth_method": "private_key_jwt",
             "jwks": {"keys": [public_jwk(KEY, "k1")]}, "grant_types": ["authorization_code", "refresh_token"],
             "scope": "openid profile offline_access"},
            # Its keys are on this machine, which the server refuses to call (no test setting here).
            web | {"client_id": LOOPBACK_URI, "client_name": "JAR Loopback", "jwks_uri": "https://127.0.0.1:9/jwks"},
            {"client_id": NATIVE, "client_name": "PAR Native", "application_type": "native",
             "redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none",
             "grant_types": ["authorization_code"], "scope": "openid profile"},
        ],
    }
    try:
        with serve(config, data_dir):
            discovery = requests.get(base + "/.well-known/openid-configuration", timeout=10).json()
            yield {"base": base, "secret": secret, "redirect": redirect, "discovery": discovery}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def browser(env):
    browser = Browser(env["base"])
    browser.sign_up()
    return browser


def query(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlparse(url).query))


def parameters(env, client_id=WEB, **extra):
    verifier = secrets.token_urlsafe(48)
    items = {
        "client_id": client_id, "response_type": "code", "redirect_uri": env["redirect"], "scope": "openid profile",
        "state": secrets.token_urlsafe(12), "nonce": secrets.token_urlsafe(12),
        "code_challenge": create_s256_code_challenge(verifier), "code_challenge_method": "S256",
    }
    items.update(extra)
    return items, verifier


def push(env, items, client_id=WEB, secret=None):
    return requests.post(env["discovery"]["pushed_authorization_request_endpoint"], data=items,
                         auth=(client_id, secret or env["secret"]), timeout=10)


def authorize_url(env, client_id, request_uri, **extra):
    return env["discovery"]["authorization_endpoint"] + "?" + urllib.parse.urlencode(
        {"client_id": client_id, "request_uri": request_uri} | extra)


# Attacks and refusals first.

def test_request_uri_is_one_time(env, browser):
    items, _ = parameters(env)
    request_uri = push(env, items).json()["request_uri"]
    callback = browser.authorize(authorize_url(env, WEB, request_uri))
    assert "code" in query(callback)
    again = browser.authorize(authorize_url(env, WEB, request_uri))
    assert query(again)["error"] == "invalid_request_uri"
    assert "code" not in query(again)


def test_request_uri_yields_one_code_when_used_twice_at_once(env, browser):
    """Two tabs (or a double click) on the same request_uri at the same moment: one code."""
    items, _ = parameters(env)
    browser.authorize(authorize_url(env, WEB, push(env, items).json()["request_uri"]))  # consent given once
    items, _ = parameters(env)
    url = authorize_url(env, WEB, push(env, items).json()["request_uri"])
    first = browser.session.get(url, allow_redirects=False, timeout=10)  # binds it to this browser
    assert "code" in query(first.headers["Location"])
    items, _ = parameters(env)
    url = authorize_url(env, WEB, push(env, items).json()["request_uri"])
    answers = []
    barrier = threading.Barrier(4)

    def go():
        barrier.wait()
        answers.append(query(browser.session.get(url, allow_redirects=False, timeout=10).headers["Location"]))

    threads = [threading.Thread(target=go) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum("code" in answer for answer in answers) == 1, answers
    assert all(answer.get("error") == "invalid_request_uri" for answer in answers if "code" not in answer)


def test_expired_request_uri_is_refused(env, browser):
    items, _ = parameters(env)
    request_uri = push(env, items).json()["request_uri"]
    time.sleep(LIFETIME + 1.5)
    callback = browser.authorize(authorize_url(env, WEB, request_uri))
    assert query(callback)["error"] == "invalid_request_uri"


def test_another_clients_request_uri_is_refused(env, browser):
    items, _ = parameters(env)
    request_uri = push(env, items).json()["request_uri"]
    # The other client names itself, and a redirect URI it has registered: still not its request.
    response = browser.session.get(authorize_url(env, OTHER, request_uri), allow_redirects=False, timeout=10)
    assert response.status_code == 400 and "invalid_request_uri" in response.text
    # The owner can still use it: the refusal consumed nothing.
    assert "code" in query(browser.authorize(authorize_url(env, WEB, request_uri)))


def test_unknown_request_uri_is_refused(env, browser):
    response = browser.session.get(authorize_url(env, WEB, URN + secrets.token_urlsafe(32)), allow_redirects=False,
                                   timeout=10)
    assert response.status_code == 400 and "invalid_request_uri" in response.text
    # With the client's registered redirect URI alongside, the refusal goes to the client.
    callback = browser.authorize(authorize_url(env, WEB, URN + "x", redirect_uri=env["redirect"], state="s1"))
    assert query(callback)["error"] == "invalid_request_uri" and query(callback)["state"] == "s1"


def test_request_uri_in_use_is_bound_to_its_browser(env, browser):
    items, _ = parameters(env)
    request_uri = push(env, items).json()["request_uri"]
    victim = Browser(env["base"])
    first = victim.session.get(authorize_url(env, WEB, request_uri), allow_redirects=False, timeout=10)
    assert first.status_code in (302, 303)  # to the sign-in page; the request is now the victim's
    # Someone who read the request_uri (address bar, log) tries it in their own browser.
    stolen = browser.authorize(authorize_url(env, WEB, request_uri))
    assert query(stolen)["error"] == "invalid_request_uri" and "code" not in query(stolen)
    # The victim signs in and goes on.
    victim.sign_up()
    location = urllib.parse.urljoin(env["base"], query(first.headers["Location"])["return_to"])
    assert "code" in query(victim.authorize(location))


def test_client_that_must_push_cannot_use_plain_authorize(env, browser):
    items, _ = parameters(env, client_id=REQUIRED)
    callback = browser.authorize(env["discovery"]["authorization_endpoint"] + "?" + urllib.parse.urlencode(items))
    assert query(callback)["error"] == "invalid_request"
    assert "code" not in query(callback)
    request_uri = push(env, items, client_id=REQUIRED).json()["request_uri"]
    assert "code" in query(browser.authorize(authorize_url(env, REQUIRED, request_uri)))


def test_par_authenticates_the_client(env):
    items, _ = parameters(env)
    wrong = push(env, items, secret="wrong-" + uuid.uuid4().hex)
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    # A client_id in the body that is not the authenticated client.
    mismatch = push(env, items | {"client_id": OTHER})
    assert mismatch.status_code in (400, 401) and mismatch.json()["error"] in ("invalid_request", "invalid_client")


def test_par_validates_the_request_like_authorize(env):
    items, _ = parameters(env)
    for bad, error in [
        ({"redirect_uri": "https://evil.example.com/cb"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"request_uri": URN + "nested"}, "invalid_request"),
        ({"scope": "nothing-known"}, "invalid_scope"),
    ]:
        response = push(env, items | bad)
        assert response.status_code == 400, (bad, response.text)
        assert response.json()["error"] == error, (bad, response.text)
        assert response.headers["Cache-Control"] == "no-store"


def test_outer_parameters_are_ignored(env, browser):
    items, _ = parameters(env)
    request_uri = push(env, items).json()["request_uri"]
    # The browser URL tries to change the scope and the state; the pushed ones win.
    callback = browser.authorize(authorize_url(env, WEB, request_uri, scope="openid email offline_access",
                                               state="attacker"))
    assert query(callback)["state"] == items["state"]


def request_object(env, items, key=KEY, kid="k1", alg="ES256", typ="oauth-authz-req+jwt", **claims):
    """A request object of `items`, signed with `key`; `claims` override (None removes)."""
    now = int(time.time())
    payload = dict(items) | {"iss": items["client_id"], "aud": env["discovery"]["issuer"], "exp": now + 300,
                             "nbf": now - 5, "iat": now, "jti": secrets.token_urlsafe(16)}
    for name, value in claims.items():
        if value is None:
            payload.pop(name, None)
        else:
            payload[name] = value
    headers = {"kid": kid} | ({"typ": typ} if typ else {})
    if alg == "none":
        encode = lambda part: pyjwt.utils.base64url_encode(json.dumps(part).encode()).decode()
        return encode({"alg": "none"} | headers) + "." + encode(payload) + "."
    return pyjwt.encode(payload, key, algorithm=alg, headers=headers)


def jar_url(env, items, **object_claims):
    """/authorize with the request object and, outside it, only what lets a refusal be
    redirected (client_id, redirect_uri, state)."""
    return env["discovery"]["authorization_endpoint"] + "?" + urllib.parse.urlencode({
        "client_id": items["client_id"], "redirect_uri": items["redirect_uri"], "state": "outer",
        "request": request_object(env, items, **object_claims)})


@pytest.mark.parametrize("claims,hint", [
    ({"key": OTHER_KEY}, "signature"),
    ({"aud": "https://another-server.example.com"}, "'aud'"),
    ({"exp": int(time.time()) - 120}, "expired"),
    ({"exp": None}, "'exp'"),
    ({"exp": int(time.time()) + 7200}, "'exp'"),
    ({"nbf": int(time.time()) + 600}, "'nbf'"),
    ({"nbf": int(time.time()) - 7200}, "'nbf'"),
    ({"iss": OTHER}, "'iss'"),
    ({"typ": "JWT"}, "'typ'"),
    ({"client_id": OTHER}, "'client_id'"),
])
def test_bad_request_objects_are_refused(env, browser, claims, hint):
    items, _ = parameters(env, client_id=JAR)
    callback = browser.authorize(jar_url(env, items, **claims))
    answer = query(callback)
    assert answer["error"] == "invalid_request_object", answer
    assert hint in answer["error_description"], answer
    assert answer["state"] == "outer" and "code" not in answer


def test_unsigned_request_object_stays_refused(env, browser):
    items, _ = parameters(env, client_id=JAR)
    callback = browser.authorize(jar_url(env, items, alg="none"))
    assert query(callback)["error"] == "request_not_supported"
    response = push(env, items | {"request": request_object(env, items, alg="none")}, client_id=JAR)
    assert response.status_code == 400 and response.json()["error"] == "request_not_supported"


def test_bad_request_object_is_refused_at_par(env):
    items, _ = parameters(env, client_id=JAR)
    response = push(env, {"request": request_object(env, items, key=OTHER_KEY)}, client_id=JAR)
    assert response.status_code == 400 and response.json()["error"] == "invalid_request_object"


def test_request_object_jti_is_one_time(env, browser):
    items, _ = parameters(env, client_id=JAR)
    url = jar_url(env, items)
    assert "code" in query(browser.authorize(url))
    assert query(browser.authorize(url))["error"] == "invalid_request_object"
    # At /par too: the same object cannot be pushed twice.
    obj = request_object(env, items)
    assert push(env, {"request": obj}, client_id=JAR).status_code == 201
    replay = push(env, {"request": obj}, client_id=JAR)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_request_object"


def test_request_object_jti_stays_one_time_within_the_leeway_after_exp(env):
    # Attack: an object whose exp passed 10 s ago, still within the 30 s the server allows
    # for clock skew, pushed twice. Its record must outlive every check that accepts it.
    items, _ = parameters(env, client_id=JAR)
    obj = request_object(env, items, exp=int(time.time()) - 10)
    assert push(env, {"request": obj}, client_id=JAR).status_code == 201
    replay = push(env, {"request": obj}, client_id=JAR)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_request_object"


def test_client_that_must_sign_cannot_send_plain_parameters(env, browser):
    items, _ = parameters(env, client_id=SIGNED_ONLY)
    plain = browser.authorize(env["discovery"]["authorization_endpoint"] + "?" + urllib.parse.urlencode(items))
    assert query(plain)["error"] == "invalid_request"
    pushed_plain = push(env, items, client_id=SIGNED_ONLY)
    assert pushed_plain.status_code == 400 and pushed_plain.json()["error"] == "invalid_request"
    # Signed, by value and through PAR: accepted.
    assert "code" in query(browser.authorize(jar_url(env, items)))
    request_uri = push(env, {"request": request_object(env, items)}, client_id=SIGNED_ONLY).json()["request_uri"]
    assert "code" in query(browser.authorize(authorize_url(env, SIGNED_ONLY, request_uri)))


# The flow that works.

def test_request_object_replaces_the_outer_parameters(env, browser):
    assert env["discovery"]["request_parameter_supported"] is True
    assert "ES256" in env["discovery"]["request_object_signing_alg_values_supported"]
    assert "none" not in env["discovery"]["request_object_signing_alg_values_supported"]
    items, verifier = parameters(env, client_id=JAR, scope="openid profile offline_access")
    url = jar_url(env, items) + "&scope=openid&code_challenge=" + "A" * 43
    callback = browser.authorize(url)
    answer = query(callback)
    assert answer["state"] == items["state"]  # the object's state, not the outer one
    client = OAuth2Session(JAR, env["secret"], redirect_uri=env["redirect"],
                           token_endpoint_auth_method="client_secret_basic")
    token = client.fetch_token(env["discovery"]["token_endpoint"], authorization_response=callback,
                               code_verifier=verifier)
    assert token["scope"] == "openid profile offline_access"


def test_request_object_through_par(env, browser):
    items, verifier = parameters(env, client_id=JAR)
    response = push(env, {"client_id": JAR, "request": request_object(env, items)}, client_id=JAR)
    assert response.status_code == 201, response.text
    callback = browser.authorize(authorize_url(env, JAR, response.json()["request_uri"]))
    assert query(callback)["state"] == items["state"] and "code" in query(callback)


def test_par_happy_path_with_authlib(env, browser):
    assert env["discovery"]["pushed_authorization_request_endpoint"] == env["base"] + "/par"
    assert env["discovery"]["require_pushed_authorization_requests"] is False
    key = DPoPKey()  # a pushed `dpop_jkt` arrives with the request and binds the code (RFC 9449 §10)
    items, verifier = parameters(env, scope="openid profile offline_access", dpop_jkt=key.thumbprint)
    response = push(env, items)
    assert response.status_code == 201, response.text
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json()
    assert body["expires_in"] == LIFETIME
    assert body["request_uri"].startswith(URN) and len(body["request_uri"]) > len(URN) + 40
    callback = browser.authorize(authorize_url(env, WEB, body["request_uri"]))
    answer = query(callback)
    assert answer["state"] == items["state"] and answer["iss"] == env["discovery"]["issuer"]
    client = OAuth2Session(WEB, env["secret"], redirect_uri=env["redirect"],
                           token_endpoint_auth_method="client_secret_basic")
    token_endpoint = env["discovery"]["token_endpoint"]
    token = client.fetch_token(token_endpoint, authorization_response=callback, code_verifier=verifier,
                               headers={"DPoP": key.proof("POST", token_endpoint)})
    assert token["scope"] == "openid profile offline_access" and "id_token" in token and "refresh_token" in token
    assert token["token_type"] == "DPoP"


def test_request_uri_outlives_its_push_window_once_the_user_is_signing_in(env):
    """Lifetime counts to the first /authorize; then it lasts for the sign-in window."""
    items, verifier = parameters(env)
    request_uri = push(env, items).json()["request_uri"]
    browser = Browser(env["base"])
    first = browser.session.get(authorize_url(env, WEB, request_uri), allow_redirects=False, timeout=10)
    assert first.status_code in (302, 303)  # to the sign-in page, carrying client_id + request_uri + resume
    time.sleep(LIFETIME + 1.5)
    browser.sign_up()
    location = urllib.parse.urljoin(env["base"], query(first.headers["Location"])["return_to"])
    assert "request_uri=" in location and "scope=" not in location
    callback = browser.authorize(location)
    assert "code" in query(callback), callback


def test_public_client_pushes_with_none(env, browser):
    items, verifier = parameters(env, client_id=NATIVE, redirect_uri="http://127.0.0.1/callback")
    response = requests.post(env["discovery"]["pushed_authorization_request_endpoint"], data=items, timeout=10)
    assert response.status_code == 201, response.text
    callback = browser.authorize(authorize_url(env, NATIVE, response.json()["request_uri"]))
    code = query(callback)["code"]
    token = requests.post(env["discovery"]["token_endpoint"], timeout=10, data={
        "grant_type": "authorization_code", "code": code, "client_id": NATIVE,
        "redirect_uri": "http://127.0.0.1/callback", "code_verifier": verifier})
    assert token.status_code == 200, token.text


def test_a_dpop_proof_at_par_binds_the_code_to_its_key(env, browser):
    """RFC 9449 §10.1: a proof sent with the push binds the code like `dpop_jkt`; the attacker who
    steals the code from the redirect cannot redeem it with their own key."""
    app_key, attacker_key = DPoPKey(), DPoPKey()
    par = env["discovery"]["pushed_authorization_request_endpoint"]
    token_endpoint = env["discovery"]["token_endpoint"]

    def pushed_code(**extra):
        items, verifier = parameters(env, client_id=NATIVE, redirect_uri="http://127.0.0.1/callback", **extra)
        response = requests.post(par, data=items, headers={"DPoP": app_key.proof("POST", par)}, timeout=10)
        assert response.status_code == 201, response.text
        return query(browser.authorize(authorize_url(env, NATIVE, response.json()["request_uri"])))["code"], verifier

    def redeem(code, verifier, key):
        return requests.post(token_endpoint, headers={"DPoP": key.proof("POST", token_endpoint)}, timeout=10, data={
            "grant_type": "authorization_code", "code": code, "client_id": NATIVE,
            "redirect_uri": "http://127.0.0.1/callback", "code_verifier": verifier})

    code, verifier = pushed_code()
    stolen = redeem(code, verifier, attacker_key)
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant", stolen.text
    code, verifier = pushed_code()
    token = redeem(code, verifier, app_key)
    assert token.status_code == 200 and token.json()["token_type"] == "DPoP", token.text
    # A proof and a `dpop_jkt` naming another key contradict each other.
    items, _ = parameters(env, client_id=NATIVE, redirect_uri="http://127.0.0.1/callback",
                          dpop_jkt=attacker_key.thumbprint)
    both = requests.post(par, data=items, headers={"DPoP": app_key.proof("POST", par)}, timeout=10)
    assert both.status_code == 400 and both.json()["error"] == "invalid_dpop_proof", both.text
    # A proof for another endpoint is refused.
    items, _ = parameters(env, client_id=NATIVE, redirect_uri="http://127.0.0.1/callback")
    wrong = requests.post(par, data=items, headers={"DPoP": app_key.proof("POST", token_endpoint)}, timeout=10)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_dpop_proof", wrong.text


def test_jwks_uri_on_a_loopback_address_is_refused_without_the_test_setting(env, browser):
    items, _ = parameters(env, client_id=LOOPBACK_URI)
    answer = query(browser.authorize(jar_url(env, items)))
    assert answer["error"] == "invalid_request_object"
    assert "jwks_uri" in answer["error_description"]


# jwks_uri: the client's keys at an https URL on this machine (allowed only by the test setting).

sys.path.insert(0, str(ROOT / "Tests" / "Conformance"))
from conformance.tls import make_certificates  # noqa: E402

URI_CLIENT = "jar-uri"
PRIVATE_CLIENT = "jar-private-uri"
KEY_JWT_CLIENT = "jar-key-jwt-uri"
BIG_CLIENT = "jar-big-keys"
SLOW_CLIENT = "jar-slow-keys"


class KeyServer:
    """An https server for the client's JWK Set; counts the fetches. `/big.json` answers a set
    padded past the server's 64 KiB limit, `/slow.json` answers only after 12 seconds."""

    def __init__(self, paths):
        self.keys = [public_jwk(KEY, "k1")]
        self.fetches = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.fetches += 1
                if self.path == "/slow.json":
                    time.sleep(12)
                padding = "x" * 100_000 if self.path == "/big.json" else ""
                body = json.dumps({"keys": server.keys} | ({"padding": padding} if padding else {})).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(paths["cert"], paths["key"])
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def uri(self):
        return f"https://localhost:{self.httpd.server_address[1]}/jwks.json"


@pytest.fixture(scope="module")
def uri_env():
    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix="auth-server-jwks-uri-")
    Path(data_dir).chmod(0o755)
    paths = make_certificates(data_dir)
    keys = KeyServer(paths)
    secret = "jar-secret-" + uuid.uuid4().hex + uuid.uuid4().hex
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    web = {"application_type": "web", "redirect_uris": [redirect], "client_secret_hash": hash_secret(secret),
           "scope": "openid profile"}
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(data_dir) / "var"),
        "public_dir": str(ROOT / "public"),
        "oauth": {"jwks_uri_allow_loopback_for_tests": True, "jwks_uri_ca_file": str(paths["ca"])},
        "clients": [
            web | {"client_id": URI_CLIENT, "jwks_uri": keys.uri},
            # 10.0.0.0/8 stays refused even with the test setting: only loopback is allowed.
            web | {"client_id": PRIVATE_CLIENT, "jwks_uri": "https://10.255.255.1/jwks.json"},
            web | {"client_id": BIG_CLIENT, "jwks_uri": keys.uri.replace("/jwks.json", "/big.json")},
            web | {"client_id": SLOW_CLIENT, "jwks_uri": keys.uri.replace("/jwks.json", "/slow.json")},
            # private_key_jwt with the keys at the jwks_uri.
            {"client_id": KEY_JWT_CLIENT, "application_type": "web", "redirect_uris": [redirect], "scope": "openid",
             "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": keys.uri},
        ],
    }
    try:
        with serve(config, data_dir):
            discovery = requests.get(base + "/.well-known/openid-configuration", timeout=10).json()
            yield {"base": base, "secret": secret, "redirect": redirect, "discovery": discovery, "keys": keys}
    finally:
        keys.httpd.shutdown()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def uri_browser(uri_env):
    browser = Browser(uri_env["base"])
    browser.sign_up()
    return browser


def test_jwks_uri_on_a_private_address_is_refused(uri_env, uri_browser):
    items, _ = parameters(uri_env, client_id=PRIVATE_CLIENT)
    answer = query(uri_browser.authorize(jar_url(uri_env, items)))
    assert answer["error"] == "invalid_request_object" and "jwks_uri" in answer["error_description"]


def test_jwks_uri_answers_too_large_or_too_slow_are_refused(uri_env, uri_browser):
    """A client's key set is read within bounds: past 64 KiB, or slower than the fetch's
    time limit, the request object is refused (and the server's worker is not held)."""
    for client in (BIG_CLIENT, SLOW_CLIENT):
        items, _ = parameters(uri_env, client_id=client)
        started = time.monotonic()
        answer = query(uri_browser.authorize(jar_url(uri_env, items)))
        assert answer["error"] == "invalid_request_object" and "jwks_uri" in answer["error_description"], answer
        assert time.monotonic() - started < 11.5, client


def test_a_failing_or_slow_jwks_uri_is_fetched_at_most_once_per_interval(uri_env, uri_browser):
    """Request objects naming a client whose key host fails, or has not answered yet, do not
    each start a fetch: within the 5 s refetch interval they are refused at once."""
    keys = uri_env["keys"]
    time.sleep(5.5)  # past the interval of the fetches made before
    before = keys.fetches
    for _ in range(4):
        items, _ = parameters(uri_env, client_id=BIG_CLIENT)
        answer = query(uri_browser.authorize(jar_url(uri_env, items)))
        assert answer["error"] == "invalid_request_object" and "jwks_uri" in answer["error_description"], answer
    assert keys.fetches == before + 1

    slow = Browser(uri_env["base"])
    slow.sign_up()
    items, _ = parameters(uri_env, client_id=SLOW_CLIENT)
    first = threading.Thread(target=lambda: slow.authorize(jar_url(uri_env, items)))
    first.start()
    time.sleep(1)
    for _ in range(3):
        items, _ = parameters(uri_env, client_id=SLOW_CLIENT)
        started = time.monotonic()
        answer = query(uri_browser.authorize(jar_url(uri_env, items)))
        assert answer["error"] == "invalid_request_object" and "jwks_uri" in answer["error_description"], answer
        assert time.monotonic() - started < 2, "waited for the fetch under way"
    first.join(timeout=15)
    assert keys.fetches == before + 2


def test_private_key_jwt_with_keys_at_the_jwks_uri(uri_env):
    items, _ = parameters(uri_env, client_id=KEY_JWT_CLIENT)
    now = int(time.time())

    def client_assertion(key):
        return pyjwt.encode({"iss": KEY_JWT_CLIENT, "sub": KEY_JWT_CLIENT, "aud": uri_env["discovery"]["issuer"],
                             "exp": now + 60, "iat": now, "jti": secrets.token_urlsafe(16)}, key, algorithm="ES256",
                            headers={"kid": "k1"})

    def push_with(key):
        return requests.post(uri_env["discovery"]["pushed_authorization_request_endpoint"], timeout=10, data=items | {
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": client_assertion(key)})

    forged = push_with(OTHER_KEY)
    assert forged.status_code == 401 and forged.json()["error"] == "invalid_client"
    pushed = push_with(KEY)
    assert pushed.status_code == 201, pushed.text


def test_jwks_uri_keys_cached_and_refetched_on_rotation(uri_env, uri_browser):
    keys = uri_env["keys"]
    items, verifier = parameters(uri_env, client_id=URI_CLIENT)
    callback = uri_browser.authorize(jar_url(uri_env, items))
    assert "code" in query(callback), callback
    client = OAuth2Session(URI_CLIENT, uri_env["secret"], redirect_uri=uri_env["redirect"],
                           token_endpoint_auth_method="client_secret_basic")
    assert "id_token" in client.fetch_token(uri_env["discovery"]["token_endpoint"], authorization_response=callback,
                                            code_verifier=verifier)
    fetched = keys.fetches
    assert fetched >= 1
    # Cached: a second request fetches nothing.
    items, _ = parameters(uri_env, client_id=URI_CLIENT)
    assert "code" in query(uri_browser.authorize(jar_url(uri_env, items)))
    assert keys.fetches == fetched

    # The client rotates to a new key; an object with the new kid makes the server fetch again
    # (once the short refetch interval has passed).
    new_key = ec.generate_private_key(ec.SECP256R1())
    keys.keys = [public_jwk(new_key, "k2")]
    time.sleep(5.5)
    items, _ = parameters(uri_env, client_id=URI_CLIENT)
    assert "code" in query(uri_browser.authorize(jar_url(uri_env, items, key=new_key, kid="k2")))
    assert keys.fetches == fetched + 1

    # Made-up key ids do not make the server fetch on every request.
    for _ in range(4):
        items, _ = parameters(uri_env, client_id=URI_CLIENT)
        answer = query(uri_browser.authorize(jar_url(uri_env, items, key=new_key, kid="unknown-" + uuid.uuid4().hex)))
        assert answer["error"] == "invalid_request_object"
    assert keys.fetches <= fetched + 2
    # The old key no longer verifies.
    items, _ = parameters(uri_env, client_id=URI_CLIENT)
    assert query(uri_browser.authorize(jar_url(uri_env, items)))["error"] == "invalid_request_object"


# FAPI 2.0 Security Profile: a client with "profile": "fapi2".

def assertion(env, client_id=FAPI, audience=None, key=KEY, typ=None):
    now = int(time.time())
    return pyjwt.encode({"iss": client_id, "sub": client_id, "aud": audience or env["discovery"]["issuer"],
                         "exp": now + 60, "iat": now, "jti": secrets.token_urlsafe(16)}, key, algorithm="ES256",
                        headers={"kid": "k1"} | ({"typ": typ} if typ else {}))


def fapi_push(env, body, client_id=FAPI, **assertion_options):
    return requests.post(env["discovery"]["pushed_authorization_request_endpoint"], timeout=10, data=body | {
        "client_id": client_id, "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": assertion(env, client_id=client_id, **assertion_options)})


def test_fapi2_client_cannot_use_plain_authorize(env, browser):
    items, _ = parameters(env, client_id=FAPI)
    answer = query(browser.authorize(env["discovery"]["authorization_endpoint"] + "?" + urllib.parse.urlencode(items)))
    assert answer["error"] == "invalid_request" and "push" in answer["error_description"]
    # Nor a request object at /authorize: only pushed requests.
    answer = query(browser.authorize(jar_url(env, items)))
    assert answer["error"] == "invalid_request" and "push" in answer["error_description"]


def test_fapi2_client_must_authenticate_with_private_key_jwt(env):
    items, _ = parameters(env, client_id=FAPI)
    # No authentication (as a public client would).
    none = requests.post(env["discovery"]["pushed_authorization_request_endpoint"], data=items, timeout=10)
    assert none.status_code == 401 and none.json()["error"] == "invalid_client"
    # An assertion for the token endpoint's URL: only the issuer is accepted as `aud` (§5.3.2.1).
    wrong_aud = fapi_push(env, items, audience=env["discovery"]["token_endpoint"])
    assert wrong_aud.status_code == 401 and wrong_aud.json()["error"] == "invalid_client"
    # Signed by another key.
    other = fapi_push(env, items, key=OTHER_KEY)
    assert other.status_code == 401 and other.json()["error"] == "invalid_client"


def test_a_request_object_is_not_a_client_assertion(env):
    """The attack: a request object that names its client as `sub` (signed by the client's key,
    for the issuer) travels through the browser, its history and proxies. Presented as the
    client's assertion it authenticated the client at /par (and /token, /introspect, /revoke).
    Explicit typing keeps the two apart (RFC 8725 §3.11, RFC 9101 §10.8): an assertion's `typ`
    is absent, `JWT` or `client-authentication+jwt`."""
    items, _ = parameters(env, client_id=FAPI)
    obj = request_object(env, items, sub=FAPI, exp=int(time.time()) + 60)
    posed = requests.post(env["discovery"]["pushed_authorization_request_endpoint"], timeout=10, data=items | {
        "client_id": FAPI, "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": obj})
    assert posed.status_code == 401 and posed.json()["error"] == "invalid_client", posed.text
    for typ, status in (("dpop+jwt", 401), ("logout+jwt", 401), ("JWT", 201), ("client-authentication+jwt", 201)):
        assert fapi_push(env, items, typ=typ).status_code == status, typ


def test_fapi2_needs_pkce_and_redirect_uri_and_strict_request_objects(env):
    items, _ = parameters(env, client_id=FAPI)
    without_pkce = {k: v for k, v in items.items() if not k.startswith("code_challenge")}
    response = fapi_push(env, without_pkce)
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    without_redirect = {k: v for k, v in items.items() if k != "redirect_uri"}
    response = fapi_push(env, without_redirect)
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    for claims in ({"nbf": None}, {"typ": None}, {"alg": "RS256"}):
        obj = request_object(env, items, **({"typ": None} if claims == {"typ": None} else {}),
                             **({k: v for k, v in claims.items() if k == "nbf"}))
        if claims == {"alg": "RS256"}:
            rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            obj = request_object(env, items, key=rsa_key, alg="RS256")
        response = fapi_push(env, {"request": obj})
        assert response.status_code == 400 and response.json()["error"] == "invalid_request_object", claims


def test_fapi2_happy_path_with_pushed_signed_request(env, browser):
    """§5.3.2.1: only sender-constrained access tokens; a token request without a DPoP proof is
    refused (and burns the code, like any refused redemption)."""
    key = DPoPKey()
    token_endpoint = env["discovery"]["token_endpoint"]

    def code():
        items, verifier = parameters(env, client_id=FAPI)
        response = fapi_push(env, {"request": request_object(env, items)})
        assert response.status_code == 201, response.text
        answer = query(browser.authorize(authorize_url(env, FAPI, response.json()["request_uri"])))
        assert answer["iss"] == env["discovery"]["issuer"] and answer["state"] == items["state"]
        return answer["code"], verifier

    def redeem(code, verifier, headers):
        return requests.post(token_endpoint, timeout=10, headers=headers, data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": env["redirect"],
            "code_verifier": verifier, "client_id": FAPI,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion(env)})

    unbound = redeem(*code(), {})
    assert unbound.status_code == 400 and unbound.json()["error"] == "invalid_dpop_proof", unbound.text
    token = redeem(*code(), {"DPoP": key.proof("POST", token_endpoint)})
    assert token.status_code == 200, token.text
    assert token.json()["token_type"] == "DPoP" and "refresh_token" not in token.json()
    claims = pyjwt.decode(token.json()["access_token"], options={"verify_signature": False})
    assert claims["cnf"] == {"jkt": key.thumbprint}


def rsa_dpop_proof(key, algorithm, htu, method="POST", access_token=None):
    jwk = json.loads(pyjwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    claims = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": htu, "iat": int(time.time())}
    if access_token is not None:
        digest = hashlib.sha256(access_token.encode()).digest()
        claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return pyjwt.encode(claims, key, algorithm=algorithm, headers={"typ": "dpop+jwt", "jwk": jwk})


def test_fapi2_dpop_proofs_use_the_profiles_algorithms(env, browser):
    """FAPI 2.0 Security Profile §5.4.1: a fapi2 client's signatures, DPoP proofs included, are
    PS256, ES256 or EdDSA. An RS256 proof is refused at /par, at /token and at /userinfo with the
    token bound to that key; PS256 with the same key is accepted."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    par = env["discovery"]["pushed_authorization_request_endpoint"]
    token_endpoint = env["discovery"]["token_endpoint"]
    items, verifier = parameters(env, client_id=FAPI)
    body = {"request": request_object(env, items), "client_id": FAPI,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}
    refused = requests.post(par, timeout=10, headers={"DPoP": rsa_dpop_proof(key, "RS256", par)},
                            data=body | {"client_assertion": assertion(env)})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_dpop_proof", refused.text
    assert "may use" in refused.json()["error_description"]
    pushed = requests.post(par, timeout=10, headers={"DPoP": rsa_dpop_proof(key, "PS256", par)},
                           data=body | {"client_assertion": assertion(env)})
    assert pushed.status_code == 201, pushed.text
    code = query(browser.authorize(authorize_url(env, FAPI, pushed.json()["request_uri"])))["code"]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": env["redirect"],
            "code_verifier": verifier, "client_id": FAPI,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}
    refused = requests.post(token_endpoint, timeout=10, headers={"DPoP": rsa_dpop_proof(key, "RS256", token_endpoint)},
                            data=form | {"client_assertion": assertion(env)})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_dpop_proof", refused.text
    token = requests.post(token_endpoint, timeout=10, headers={"DPoP": rsa_dpop_proof(key, "PS256", token_endpoint)},
                          data=form | {"client_assertion": assertion(env)})
    assert token.status_code == 200, token.text
    assert token.json()["token_type"] == "DPoP"
    userinfo = env["discovery"]["userinfo_endpoint"]
    access_token = token.json()["access_token"]
    for algorithm, status in (("RS256", 401), ("PS256", 200)):
        answer = requests.get(userinfo, timeout=10, headers={
            "Authorization": f"DPoP {access_token}",
            "DPoP": rsa_dpop_proof(key, algorithm, userinfo, method="GET", access_token=access_token)})
        assert answer.status_code == status, (algorithm, answer.text)
        if status == 401:
            assert 'error="invalid_dpop_proof"' in answer.headers["WWW-Authenticate"], answer.headers


def test_fapi2_codes_live_at_most_60_seconds(env, browser):
    """The server's codes live 300 s here; a fapi2 client's expire after 60 s (§5.3.2.2)."""
    items, verifier = parameters(env, client_id=FAPI)
    request_uri = fapi_push(env, {"request": request_object(env, items)}).json()["request_uri"]
    fapi_code = query(browser.authorize(authorize_url(env, FAPI, request_uri)))["code"]
    other_items, other_verifier = parameters(env)
    other_uri = push(env, other_items).json()["request_uri"]
    other_code = query(browser.authorize(authorize_url(env, WEB, other_uri)))["code"]
    time.sleep(62)
    token_endpoint = env["discovery"]["token_endpoint"]
    expired = requests.post(token_endpoint, timeout=10, headers={"DPoP": DPoPKey().proof("POST", token_endpoint)}, data={
        "grant_type": "authorization_code", "code": fapi_code, "redirect_uri": env["redirect"],
        "code_verifier": verifier, "client_id": FAPI,
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": assertion(env)})
    assert expired.status_code == 400 and expired.json()["error"] == "invalid_grant", expired.text
    still = requests.post(env["discovery"]["token_endpoint"], auth=(WEB, env["secret"]), timeout=10, data={
        "grant_type": "authorization_code", "code": other_code, "redirect_uri": env["redirect"],
        "code_verifier": other_verifier})
    assert still.status_code == 200, still.text


def test_fapi2_refresh_token_does_not_rotate_so_a_retry_succeeds(env, browser):
    """§5.3.2.1: no rotation unless a retry with the previous refresh token succeeds. A fapi2
    client's refresh token is not rotated: the client that lost a response retries with the same
    token and gets tokens; the access tokens stay DPoP-bound, and revoking the token ends it."""
    key = DPoPKey()
    token_endpoint = env["discovery"]["token_endpoint"]
    client_auth = {"client_id": FAPI_REFRESH,
                   "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}

    def post(url, form):
        return requests.post(url, timeout=10, headers={"DPoP": key.proof("POST", url)},
                             data=form | client_auth | {"client_assertion": assertion(env, client_id=FAPI_REFRESH)})

    items, verifier = parameters(env, client_id=FAPI_REFRESH, scope="openid profile offline_access")
    pushed = fapi_push(env, {"request": request_object(env, items)}, client_id=FAPI_REFRESH)
    assert pushed.status_code == 201, pushed.text
    code = query(browser.authorize(authorize_url(env, FAPI_REFRESH, pushed.json()["request_uri"])))["code"]
    first = post(token_endpoint, {"grant_type": "authorization_code", "code": code,
                                  "redirect_uri": env["redirect"], "code_verifier": verifier})
    assert first.status_code == 200, first.text
    refresh_token = first.json()["refresh_token"]
    for _ in range(3):  # the same token again and again, as a client whose responses were lost
        again = post(token_endpoint, {"grant_type": "refresh_token", "refresh_token": refresh_token})
        assert again.status_code == 200, again.text
        assert again.json()["token_type"] == "DPoP" and "refresh_token" not in again.json()
        claims = pyjwt.decode(again.json()["access_token"], options={"verify_signature": False})
        assert claims["cnf"] == {"jkt": key.thumbprint}
    revoked = post(env["discovery"]["revocation_endpoint"], {"token": refresh_token,
                                                             "token_type_hint": "refresh_token"})
    assert revoked.status_code == 200, revoked.text
    after = post(token_endpoint, {"grant_type": "refresh_token", "refresh_token": refresh_token})
    assert after.status_code == 400 and after.json()["error"] == "invalid_grant", after.text


@pytest.mark.parametrize("client,key", [
    ({"token_endpoint_auth_method": "client_secret_basic", "client_secret_hash": "$hmac-sha256$AAECAwQFBgcICQoLDA0ODw$ObV2ckyoBJFnYNAAENDZoP0FE9hD8MMU_goHlwAIlK4"},
     "token_endpoint_auth_method"),
    ({"application_type": "native", "token_endpoint_auth_method": "none",
      "redirect_uris": ["http://127.0.0.1/callback"]}, "profile"),
    ({"require_pkce": False}, "require_pkce"),
])
def test_fapi2_client_configured_against_the_profile_is_a_configuration_error(tmp_path, client, key):
    entry = {"client_id": "bad-fapi", "application_type": "web", "profile": "fapi2",
             "redirect_uris": ["https://app.example.com/cb"], "token_endpoint_auth_method": "private_key_jwt",
             "jwks": {"keys": [public_jwk(KEY, "k1")]}} | client
    if entry["token_endpoint_auth_method"] != "private_key_jwt":
        entry.pop("jwks")
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"issuer": "https://id.example.com", "data_dir": str(tmp_path / "var"),
                                "clients": [entry]}))
    result = subprocess.run([binary(), "clients", "check", "--config", str(path)], capture_output=True, text=True)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"clients[0].{key}" in output and "FAPI 2.0" in output, output


@pytest.mark.parametrize("client,message", [
    ({"jwks_uri": "http://keys.example.com/jwks.json"}, "must be an https URL"),
    ({"jwks_uri": "https://keys.example.com/jwks.json", "jwks": {"keys": [public_jwk(KEY, "k1")]}},
     "cannot be combined with jwks"),
    ({"profile": "fapi3"}, "must be one of standard, fapi2"),
])
def test_bad_key_source_or_profile_is_a_configuration_error(tmp_path, client, message):
    entry = {"client_id": "bad", "application_type": "web", "redirect_uris": ["https://app.example.com/cb"],
             "token_endpoint_auth_method": "private_key_jwt"} | client
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"issuer": "https://id.example.com", "data_dir": str(tmp_path / "var"),
                                "clients": [entry]}))
    result = subprocess.run([binary(), "clients", "check", "--config", str(path)], capture_output=True, text=True)
    assert result.returncode != 0 and message in result.stdout + result.stderr, result.stdout + result.stderr
