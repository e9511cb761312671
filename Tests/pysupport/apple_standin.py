"""A stand-in for Sign in with Apple (appleid.apple.com), since Apple itself cannot be reached
from the tests: a real https server with Apple's shapes.

- GET  /auth/keys       Apple's signing keys (RS256 JWK Set, one `kid` each).
- GET  /auth/authorize  a page with an email field (id "apple-email") and a button (id
                        "apple-continue"); continuing POSTs `code`, `state`, `id_token` and, on the
                        first authorization of that user for that client only, `user` (name and
                        email as JSON) to `redirect_uri` (response_mode=form_post).
- POST /auth/token      grant_type=authorization_code | refresh_token, the client authenticated by
                        `client_secret`: the ES256 JWT signed with the developer key (`p8_path`), whose
                        header `kid` is `key_id` and whose `iss` is `team_id`, `sub` the client id,
                        `aud` https://appleid.apple.com, `exp` at most 15777000 s after `iat`.
- POST /auth/revoke     client_id, client_secret, token, token_type_hint; recorded in `revoked`;
                        503 (not recorded) while `revocations_unavailable` counts down.

`identity_token(...)` makes the identityToken an app receives, `authorization_code(...)` the
authorizationCode that goes with it (accepted once, for 5 minutes), and `notification(...)` the
body Apple POSTs to a server-to-server notification endpoint.
"""

import base64
import hashlib
import html
import json
import secrets
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jwt as pyjwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

APPLE_ISSUER = "https://appleid.apple.com"
MAX_CLIENT_SECRET_LIFETIME = 15777000
CODE_LIFETIME = 300


def _b64(number):
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def public_jwk(key, kid):
    """The RS256 JWK of `key`'s public half, as Apple publishes it."""
    numbers = key.public_key().public_numbers()
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": _b64(numbers.n), "e": _b64(numbers.e)}


def new_rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class AppleStandIn:
    """Start with `AppleStandIn(paths)` (`paths` from `make_certificates`); `close()` stops it.

    `team_id`/`key_id` identify the developer key whose private half is written to `p8_path`;
    the stand-in accepts client secrets signed by it only. `other_team_p8_path` holds a key of
    another team (same key id) for tests that must be refused."""

    def __init__(self, paths, team_id="TEAMID1234", key_id="KEYID12345", folder=None):
        self.team_id = team_id
        self.key_id = key_id
        folder = Path(folder or Path(paths["cert"]).parent)
        self.developer_key = ec.generate_private_key(ec.SECP256R1())
        self.p8_path = folder / f"AuthKey_{key_id}.p8"
        self.p8_path.write_bytes(self.developer_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        self.p8_path.chmod(0o600)
        self.other_team_key = ec.generate_private_key(ec.SECP256R1())
        self.other_team_p8_path = folder / f"AuthKey_{key_id}_other_team.p8"
        self.other_team_p8_path.write_bytes(self.other_team_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        # Apple publishes several keys at once.
        self.signing_keys = {"AppleKeyA1": new_rsa_key(), "AppleKeyB2": new_rsa_key()}
        self.default_kid = "AppleKeyA1"
        self.lock = threading.Lock()
        self.codes = {}           # code -> grant dict
        self.refresh_tokens = {}  # refresh token -> grant dict (a revoked one goes)
        self.issued_refresh_tokens = {}  # every refresh token ever issued -> grant dict
        self.authorized = set()   # (client_id, sub) already authorized once
        self.revoked = []         # dicts of client_id, token, token_type_hint
        self.revocations_unavailable = 0  # revocations answered 503 before Apple is back
        self.token_requests = []  # dicts: grant_type, client_id, outcome
        self.key_fetches = 0
        self.client_secrets = []  # the decoded claims of each client secret seen
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body, content_type="application/json"):
                data = body if isinstance(body, bytes) else body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def _json(self, status, value):
                self._send(status, json.dumps(value))

            def _form(self):
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length).decode()
                return {k: v[0] for k, v in urllib.parse.parse_qs(raw, keep_blank_values=True).items()}

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
                if url.path == "/auth/keys":
                    with standin.lock:
                        standin.key_fetches += 1
                    self._json(200, standin.jwks())
                elif url.path == "/auth/authorize":
                    self._send(200, standin._authorize_page(query), "text/html; charset=utf-8")
                else:
                    self._json(404, {"error": "not_found"})

            def do_POST(self):
                url = urllib.parse.urlsplit(self.path)
                form = self._form()
                if url.path == "/auth/token":
                    status, value = standin._token(form)
                    self._json(status, value)
                elif url.path == "/auth/revoke":
                    status, value = standin._revoke(form)
                    if status == 200:
                        self._send(200, b"")
                    else:
                        self._json(status, value)
                elif url.path == "/auth/authorize":
                    self._send(200, standin._continue(form), "text/html; charset=utf-8")
                else:
                    self._json(404, {"error": "not_found"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(paths["cert"], paths["key"])
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    # The surface the server is configured with.

    @property
    def base(self):
        return f"https://localhost:{self.httpd.server_address[1]}"

    @property
    def endpoints(self):
        """For the provider's `endpoints_for_tests`."""
        return {"authorize": self.base + "/auth/authorize", "token": self.base + "/auth/token",
                "revoke": self.base + "/auth/revoke", "keys": self.base + "/auth/keys"}

    def jwks(self):
        return {"keys": [public_jwk(key, kid) for kid, key in self.signing_keys.items()]}

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # Tokens, codes and notifications as Apple makes them.

    @staticmethod
    def sub_for(email):
        """A stable Apple user id for an address (Apple's look like 000123.abc….0123)."""
        return "001234." + hashlib.sha256(email.lower().encode()).hexdigest()[:32] + ".0042"

    def sign(self, claims, kid=None, key=None):
        kid = kid or self.default_kid
        key = key or self.signing_keys.get(kid) or self.signing_keys[self.default_kid]
        return pyjwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})

    def identity_token(self, aud, sub, email="user@example.com", email_verified=True, is_private_email=False,
                       nonce=None, exp_in=600, iss=APPLE_ISSUER, kid=None, key=None, nonce_supported=True,
                       iat=None, extra=None):
        """The identityToken (an ID token signed by Apple). Apple sends `email_verified` and
        `is_private_email` as booleans or as the strings "true"/"false"; booleans here unless a
        string is passed. `nonce` is put in as given (apps pass the SHA-256 hex of their raw nonce)."""
        now = int(time.time()) if iat is None else iat
        claims = {"iss": iss, "aud": aud, "exp": now + exp_in, "iat": now, "sub": sub,
                  "c_hash": secrets.token_urlsafe(16), "auth_time": now, "nonce_supported": nonce_supported}
        if email is not None:
            claims["email"] = email
            claims["email_verified"] = email_verified
            claims["is_private_email"] = is_private_email
        if nonce is not None:
            claims["nonce"] = nonce
        claims.update(extra or {})
        return self.sign(claims, kid=kid, key=key)

    def authorization_code(self, client_id, sub, email="user@example.com", email_verified=True,
                           is_private_email=False, nonce=None, redirect_uri=None):
        """An authorizationCode the token endpoint accepts once, for 5 minutes, from `client_id`."""
        code = "c" + secrets.token_hex(16) + ".0.abcd." + secrets.token_urlsafe(24)
        with self.lock:
            self.codes[code] = {"client_id": client_id, "sub": sub, "email": email, "email_verified": email_verified,
                                "is_private_email": is_private_email, "nonce": nonce, "redirect_uri": redirect_uri,
                                "expires": time.time() + CODE_LIFETIME}
        return code

    def notification(self, aud, type, sub, email=None, is_private_email=None, iss=APPLE_ISSUER, kid=None, key=None,
                     iat=None, jti=None):
        """The JSON body Apple POSTs: {"payload": JWS}; the JWS's `events` claim is a JSON string."""
        event = {"type": type, "sub": sub, "event_time": int(time.time() * 1000)}
        if email is not None:
            event["email"] = email
        if is_private_email is not None:
            event["is_private_email"] = "true" if is_private_email else "false"
        claims = {"iss": iss, "aud": aud, "iat": int(time.time()) if iat is None else iat,
                  "jti": jti or secrets.token_urlsafe(16), "events": json.dumps(event)}
        return {"payload": self.sign(claims, kid=kid, key=key)}

    def client_secret(self, client_id, key=None, team_id=None, key_id=None, lifetime=3600, iat=None):
        """A client secret as the server should make it (for tests of the stand-in itself)."""
        now = int(time.time()) if iat is None else iat
        return pyjwt.encode({"iss": team_id or self.team_id, "iat": now, "exp": now + lifetime,
                             "aud": APPLE_ISSUER, "sub": client_id}, key or self.developer_key, algorithm="ES256",
                            headers={"kid": key_id or self.key_id})

    # The endpoints.

    def _client_authenticated(self, form):
        client_id = form.get("client_id", "")
        secret = form.get("client_secret", "")
        try:
            header = pyjwt.get_unverified_header(secret)
            if header.get("alg") != "ES256" or header.get("kid") != self.key_id:
                return False
            claims = pyjwt.decode(secret, self.developer_key.public_key(), algorithms=["ES256"], audience=APPLE_ISSUER,
                                  issuer=self.team_id, options={"require": ["iss", "iat", "exp", "aud", "sub"]})
        except pyjwt.PyJWTError:
            return False
        with self.lock:
            self.client_secrets.append(claims)
        return (claims["sub"] == client_id and claims["exp"] - claims["iat"] <= MAX_CLIENT_SECRET_LIFETIME
                and claims["iat"] <= time.time() + 60)

    def _id_token_for(self, grant, client_id):
        return self.identity_token(client_id, grant["sub"], email=grant["email"],
                                   email_verified=grant["email_verified"],
                                   is_private_email=grant["is_private_email"], nonce=grant.get("nonce"))

    def _token(self, form):
        grant_type = form.get("grant_type")
        client_id = form.get("client_id", "")

        def record(outcome):
            with self.lock:
                self.token_requests.append({"grant_type": grant_type, "client_id": client_id, "outcome": outcome})

        if not self._client_authenticated(form):
            record("invalid_client")
            return 400, {"error": "invalid_client"}
        if grant_type == "authorization_code":
            with self.lock:
                grant = self.codes.pop(form.get("code", ""), None)
            if (grant is None or grant["expires"] < time.time() or grant["client_id"] != client_id
                    or (grant["redirect_uri"] is not None and grant["redirect_uri"] != form.get("redirect_uri"))):
                record("invalid_grant")
                return 400, {"error": "invalid_grant"}
            refresh = "r" + secrets.token_hex(16) + ".0.abcd." + secrets.token_urlsafe(24)
            with self.lock:
                self.refresh_tokens[refresh] = grant | {"client_id": client_id}
                self.issued_refresh_tokens[refresh] = self.refresh_tokens[refresh]
            record("ok")
            return 200, {"access_token": "a" + secrets.token_hex(16) + ".0.abcd." + secrets.token_urlsafe(24),
                         "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh,
                         "id_token": self._id_token_for(grant, client_id)}
        if grant_type == "refresh_token":
            with self.lock:
                grant = self.refresh_tokens.get(form.get("refresh_token", ""))
            if grant is None or grant["client_id"] != client_id:
                record("invalid_grant")
                return 400, {"error": "invalid_grant"}
            record("ok")
            return 200, {"access_token": "a" + secrets.token_hex(16), "token_type": "Bearer", "expires_in": 3600,
                         "id_token": self._id_token_for(grant | {"nonce": None}, client_id)}
        record("unsupported_grant_type")
        return 400, {"error": "unsupported_grant_type"}

    def _revoke(self, form):
        if not self._client_authenticated(form):
            return 400, {"error": "invalid_client"}
        token = form.get("token", "")
        with self.lock:
            if self.revocations_unavailable > 0:
                self.revocations_unavailable -= 1
                return 503, {"error": "temporarily_unavailable"}
            self.revoked.append({"client_id": form.get("client_id"), "token": token,
                                 "token_type_hint": form.get("token_type_hint")})
            self.refresh_tokens.pop(token, None)
        return 200, None

    def _authorize_page(self, query):
        hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                         for k, v in query.items())
        return ("<!doctype html><html><head><title>Sign in with Apple (stand-in)</title></head><body>"
                f'<form method="post" action="/auth/authorize">{hidden}'
                '<label>Apple ID <input id="apple-email" name="apple_email" type="email" value=""></label>'
                '<button id="apple-continue" type="submit">Continue</button></form></body></html>')

    def _continue(self, form):
        client_id = form.get("client_id", "")
        redirect_uri = form.get("redirect_uri", "")
        email = form.get("apple_email") or "user@example.com"
        sub = self.sub_for(email)
        code = self.authorization_code(client_id, sub, email=email, nonce=form.get("nonce"),
                                       redirect_uri=redirect_uri)
        fields = {"code": code, "id_token": self.identity_token(client_id, sub, email=email, nonce=form.get("nonce"))}
        if "state" in form:
            fields["state"] = form["state"]
        with self.lock:
            first = (client_id, sub) not in self.authorized
            self.authorized.add((client_id, sub))
        if first:
            fields["user"] = json.dumps({"name": {"firstName": "Taro", "lastName": "Apple"}, "email": email})
        inputs = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                         for k, v in fields.items())
        return ("<!doctype html><html><body onload=\"document.forms[0].submit()\">"
                f'<form method="post" action="{html.escape(redirect_uri)}">{inputs}'
                '<noscript><button type="submit">Continue</button></noscript></form></body></html>')
