"""Signing in through a generic OpenID provider on the web pages, against a real `auth-server
serve`: the upstream here is a small https provider in the test (discovery, keys, token
endpoint) whose answers each test chooses, so that the refusals can be driven exactly: a wrong
or replayed state, a state from another browser, an ID token for another audience or with
another nonce, an error from the provider; and the linking rules: a new account, the link
reused, proof of control before linking an existing verified address, another account never
linked, an unverified address never linked, an identity of one account never moved to another,
a disabled account refused, the last way in kept."""

import base64
import concurrent.futures
import hashlib
import json
import os
import shutil
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jwt as pyjwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from conftest import PASSWORD, ROOT, free_port, hidden_fields, serve
from auth_server import held_lock, psql, wait_for_lock_waiters  # noqa: E402

sys.path.insert(0, str(ROOT / "Tests" / "Conformance"))
from conformance.tls import make_certificates  # noqa: E402

CLIENT_ID = "downstream-web"
CLIENT_SECRET = "upstream-secret-" + uuid.uuid4().hex


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Provider:
    """An OpenID provider over https on 127.0.0.1: discovery, JWKS and a token endpoint that
    answers with `self.answer(form)`; records every token request."""

    def __init__(self, paths):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        numbers = self.key.public_key().public_numbers()
        self.jwk = {"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
                    "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
                    "e": b64url(numbers.e.to_bytes(3, "big"))}
        self.token_requests = []
        self.answer = None
        self.discovery_issuer = None
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def reply(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/.well-known/openid-configuration":
                    self.reply(200, {"issuer": provider.discovery_issuer or provider.issuer,
                                     "authorization_endpoint": provider.issuer + "/authorize",
                                     "token_endpoint": provider.issuer + "/token",
                                     "jwks_uri": provider.issuer + "/jwks"})
                elif self.path == "/jwks":
                    self.reply(200, {"keys": [provider.jwk]})
                else:
                    self.reply(404, {})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                form["authorization"] = self.headers.get("Authorization")
                provider.token_requests.append(form)
                status, body = provider.answer(form)
                self.reply(status, body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(paths["cert"], paths["key"])
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def issuer(self):
        return f"https://localhost:{self.httpd.server_address[1]}"

    def id_token(self, sub, nonce, email=None, email_verified=True, aud=CLIENT_ID, iss=None, name="Up Stream"):
        now = int(time.time())
        claims = {"iss": iss or self.issuer, "sub": sub, "aud": aud, "iat": now, "exp": now + 300, "nonce": nonce,
                  "name": name}
        if email:
            claims["email"] = email
            claims["email_verified"] = email_verified
        return pyjwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "k1"})

    def answers(self, sub, email=None, email_verified=True, **changes):
        """The token endpoint's next answers: an ID token for `sub` with the nonce of the request
        being finished (set by `Site.start`)."""
        def answer(form):
            return 200, {"access_token": "at", "token_type": "Bearer",
                         "id_token": self.id_token(sub, changes.pop("nonce", None) or self.nonce, email,
                                                   email_verified, **changes)}
        self.answer = answer


@pytest.fixture(scope="module")
def site():
    folder = Path(tempfile.mkdtemp(prefix="auth-server-upstream-web-"))
    os.chmod(folder, 0o755)
    paths = make_certificates(folder)
    provider = Provider(paths)
    secret_file = folder / "upstream-secret"
    secret_file.write_text(CLIENT_SECRET + "\n")
    client_key = ec.generate_private_key(ec.SECP256R1())
    key_file = folder / "upstream-client-key.pem"
    key_file.write_bytes(client_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
    port = free_port()
    base = f"http://localhost:{port}"
    common = {"type": "oidc", "client_id": CLIENT_ID, "client_secret_file": str(secret_file),
              "ca_file": str(paths["ca"]), "allow_loopback_for_tests": True}
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(folder / "var"),
        "public_dir": str(ROOT / "public"), "clients": [],
        "sign_up": {"max_per_email": 2},
        "upstream_providers": [
            common | {"id": "corp", "label": "Corp", "issuer": provider.issuer},
            # Its discovery document names another issuer (§4.3): never used.
            common | {"id": "liar", "label": "Liar", "issuer": provider.issuer + "/liar"},
            # The same provider, with private_key_jwt instead of the secret.
            {k: v for k, v in common.items() if k != "client_secret_file"}
            | {"id": "keyed", "label": "Keyed", "issuer": provider.issuer, "private_key_file": str(key_file),
               "key_id": "up-1"},
        ],
    }
    try:
        with serve(config, folder):
            site = Site(base, provider, folder)
            site.client_key = client_key
            yield site
    finally:
        provider.httpd.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


class Site:
    def __init__(self, base, provider, folder):
        self.base = base
        self.provider = provider
        self.folder = folder

    def sql(self, statement):
        return psql(self.folder, statement)

    def start(self, browser, return_to="/account", provider="corp", ui_locales=None):
        """/upstream/<id>/start: returns the authorization request's parameters."""
        query = {"return_to": return_to} | ({"ui_locales": ui_locales} if ui_locales else {})
        response = browser.get(f"{self.base}/upstream/{provider}/start", params=query,
                               allow_redirects=False, timeout=10)
        assert response.status_code == 303, response.text[:500]
        location = response.headers["Location"]
        assert location.startswith(self.provider.issuer + "/authorize?")
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
        self.provider.nonce = params["nonce"]
        return params

    def callback(self, browser, params, provider="corp"):
        return browser.get(f"{self.base}/upstream/{provider}/callback", params=params, allow_redirects=False,
                           timeout=30)


class Browser(requests.Session):
    def __init__(self, base):
        super().__init__()
        self.base = base

    def api(self, method, path, payload=None):
        csrf = self.get(self.base + "/api/csrf", timeout=10).json()["csrf_token"]
        return self.request(method, self.base + path, json=payload, timeout=10,
                            headers={"X-CSRF-Token": csrf, "Origin": self.base})

    def account(self):
        return self.get(self.base + "/api/account", timeout=10)

    def sign_up_with_password(self, email):
        response = self.api("POST", "/api/signup/password",
                            {"email": email, "display_name": "Pass Word", "password": PASSWORD})
        assert response.status_code in (200, 201), response.text

    def sign_in_with_password(self, email):
        response = self.api("POST", "/api/signin/password", {"email": email, "password": PASSWORD})
        assert response.status_code == 200, response.text


def new_email():
    return f"up-{uuid.uuid4().hex[:10]}@example.com"


def upstream_sign_in(site, browser, sub, email=None, email_verified=True, return_to="/account"):
    params = site.start(browser, return_to)
    site.provider.answers(sub, email, email_verified)
    return site.callback(browser, {"state": params["state"], "code": "code-" + uuid.uuid4().hex})


def test_buttons_on_signin_and_signup_in_english_and_japanese(site):
    browser = Browser(site.base)
    for path in ("/signin", "/signup"):
        english = browser.get(site.base + path, params={"return_to": "/authorize?client_id=x"}, timeout=10).text
        assert "Continue with Corp" in english and "Continue with Liar" in english
        assert 'href="/upstream/corp/start?return_to=/authorize?client_id%3Dx"' in english \
            or "/upstream/corp/start?return_to=%2Fauthorize" in english, english
        japanese = browser.get(site.base + path, params={"ui_locales": "ja"}, timeout=10).text
        assert "Corpで続ける" in japanese
        # No Apple button without an apple provider.
        assert "Sign in with Apple" not in english


def test_the_request_carries_state_nonce_and_pkce(site):
    browser = Browser(site.base)
    params = site.start(browser)
    assert params["response_type"] == "code" and params["client_id"] == CLIENT_ID
    assert params["redirect_uri"] == site.base + "/upstream/corp/callback"
    assert params["code_challenge_method"] == "S256" and len(params["state"]) == 43
    assert params["nonce"] and params["nonce"] != params["state"]
    assert "openid" in params["scope"].split()
    # The state is stored as a digest only.
    digest = hashlib.sha256(params["state"].encode()).hexdigest()
    assert site.sql(f"SELECT count(*) FROM upstream_authorization_requests "
                    f"WHERE state_digest = '\\x{digest}'::bytea") == "1"
    # The token request sends the verifier that matches the challenge, with client_secret_basic.
    site.provider.answers("sub-" + uuid.uuid4().hex, new_email())
    response = site.callback(browser, {"state": params["state"], "code": "the-code"})
    assert response.status_code == 303, response.text[:500]
    sent = site.provider.token_requests[-1]
    assert sent["code"] == "the-code" and sent["grant_type"] == "authorization_code"
    assert b64url(hashlib.sha256(sent["code_verifier"].encode()).digest()) == params["code_challenge"]
    assert sent["redirect_uri"] == site.base + "/upstream/corp/callback"
    assert sent["authorization"] == "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()


def test_private_key_jwt_at_the_token_endpoint(site):
    """A provider configured with private_key_file gets a signed assertion (OpenID Connect Core
    §9): iss and sub the client id, aud its token endpoint, a fresh jti, a minute of validity."""
    seen = []
    for _ in range(2):
        browser = Browser(site.base)
        params = site.start(browser, provider="keyed")
        site.provider.answers("sub-" + uuid.uuid4().hex, new_email())
        response = site.callback(browser, {"state": params["state"], "code": "keyed-code"}, provider="keyed")
        assert response.status_code == 303, response.text[:500]
        sent = site.provider.token_requests[-1]
        assert sent["authorization"] is None and sent["client_id"] == CLIENT_ID
        assert sent["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        assert pyjwt.get_unverified_header(sent["client_assertion"])["kid"] == "up-1"
        claims = pyjwt.decode(sent["client_assertion"], site.client_key.public_key(), algorithms=["ES256"],
                              audience=site.provider.issuer + "/token")
        assert claims["iss"] == claims["sub"] == CLIENT_ID and claims["exp"] - claims["iat"] == 60
        seen.append(claims["jti"])
    assert len(set(seen)) == 2 and all(len(jti) >= 22 for jti in seen)


def test_sign_up_then_sign_in_again_reuses_the_link(site):
    sub, email = "sub-" + uuid.uuid4().hex, new_email()
    browser = Browser(site.base)
    response = upstream_sign_in(site, browser, sub, email, return_to="/authorize?client_id=app")
    assert response.status_code == 303 and response.headers["Location"] == "/authorize?client_id=app"
    account = browser.account().json()
    assert account["email"] == email and account["email_verified"] is True
    identities = browser.get(site.base + "/api/account/identities", timeout=10).json()["identities"]
    assert [(i["provider"], i["email"]) for i in identities] == [("corp", email)]
    sessions = browser.get(site.base + "/api/sessions", timeout=10).json()["sessions"]
    assert [s["amr"] for s in sessions if s["current"]] == [["fed"]]
    assert site.sql(f"SELECT count(*) FROM audit_events WHERE account_id = '{account['id']}' "
                    "AND event = 'upstream.linked'") == "1"

    # Another browser, the same identity: the same account.
    again = Browser(site.base)
    assert upstream_sign_in(site, again, sub, email).status_code == 303
    assert again.account().json()["id"] == account["id"]
    assert site.sql(f"SELECT count(*) FROM audit_events WHERE account_id = '{account['id']}' "
                    "AND event = 'sign_in.succeeded' AND detail->>'method' = 'upstream:corp'") == "2"


def refused(response, status, code):
    assert response.status_code == status, response.text[:500]
    assert f'id="error-code">{code}<' in response.text, response.text[:2000]


def test_an_unknown_state_is_refused(site):
    browser = Browser(site.base)
    site.start(browser)
    forged = b64url(os.urandom(32))
    refused(site.callback(browser, {"state": forged, "code": "c"}), 400, "invalid_state")
    refused(site.callback(browser, {"code": "c"}), 400, "invalid_state")
    assert browser.account().status_code == 401


def test_a_replayed_state_is_refused(site):
    browser = Browser(site.base)
    params = site.start(browser)
    site.provider.answers("sub-" + uuid.uuid4().hex, new_email())
    answer = {"state": params["state"], "code": "c1"}
    assert site.callback(browser, answer).status_code == 303
    refused(site.callback(browser, answer), 400, "invalid_state")


def test_a_state_from_another_browser_is_refused(site):
    victim, attacker = Browser(site.base), Browser(site.base)
    # The attacker starts a sign-in with its own identity, then makes the victim's browser
    # finish it (login CSRF): the victim's browser lacks the attacker's binding cookie.
    params = site.start(attacker)
    site.provider.answers("attacker-" + uuid.uuid4().hex, new_email())
    refused(site.callback(victim, {"state": params["state"], "code": "c"}), 403, "other_browser")
    assert victim.account().status_code == 401
    # The state is used up by the refused attempt: it cannot be tried again.
    refused(site.callback(attacker, {"state": params["state"], "code": "c"}), 400, "invalid_state")


def test_an_id_token_for_another_audience_is_refused(site):
    browser = Browser(site.base)
    params = site.start(browser)
    site.provider.answers("sub-" + uuid.uuid4().hex, new_email(), aud="another-client")
    refused(site.callback(browser, {"state": params["state"], "code": "c"}), 400, "upstream_failed:id_token")
    assert browser.account().status_code == 401


def test_an_id_token_with_another_nonce_is_refused(site):
    browser = Browser(site.base)
    params = site.start(browser)
    site.provider.answers("sub-" + uuid.uuid4().hex, new_email(), nonce="not-the-nonce-we-sent")
    refused(site.callback(browser, {"state": params["state"], "code": "c"}), 400, "upstream_failed:id_token")
    assert browser.account().status_code == 401
    assert int(site.sql("SELECT count(*) FROM audit_events WHERE event = 'sign_in.failed' "
                        "AND detail->>'method' = 'upstream:corp' AND detail->>'reason' = 'id_token_nonce'")) >= 1


def test_an_id_token_of_another_issuer_is_refused(site):
    browser = Browser(site.base)
    params = site.start(browser)
    site.provider.answers("sub-" + uuid.uuid4().hex, new_email(), iss="https://evil.example")
    refused(site.callback(browser, {"state": params["state"], "code": "c"}), 400, "upstream_failed:id_token")


def test_the_providers_error_and_a_refused_code(site):
    browser = Browser(site.base)
    params = site.start(browser)
    marker = "provider-text-" + uuid.uuid4().hex[:8]
    refused(site.callback(browser, {"state": params["state"], "error": marker}), 400, "access_denied")
    # The provider's words reach neither the audit trail nor the log.
    assert site.sql(f"SELECT count(*) FROM audit_events WHERE detail::text LIKE '%{marker}%'") == "0"
    assert marker not in (site.folder / "server.log").read_text()
    params = site.start(browser)
    site.provider.answer = lambda form: (400, {"error": "invalid_grant"})
    refused(site.callback(browser, {"state": params["state"], "code": "c"}), 400, "upstream_failed:token")


def test_a_discovery_document_for_another_issuer_is_never_used(site):
    response = Browser(site.base).get(site.base + "/upstream/liar/start", allow_redirects=False, timeout=10)
    refused(response, 502, "temporarily_unavailable")
    response = Browser(site.base).get(site.base + "/upstream/nobody/start", allow_redirects=False, timeout=10)
    refused(response, 404, "unknown_provider")


def test_an_existing_verified_address_needs_proof_of_control(site):
    email = new_email()
    owner = Browser(site.base)
    owner.sign_up_with_password(email)
    owner_id = owner.account().json()["id"]
    site.sql(f"UPDATE account_emails SET verified_at = now() WHERE account_id = '{owner_id}'")
    other_email = new_email()
    Browser(site.base).sign_up_with_password(other_email)

    sub = "sub-" + uuid.uuid4().hex
    browser = Browser(site.base)
    page = upstream_sign_in(site, browser, sub, email, return_to="/authorize?client_id=app")
    # Not signed in, nothing linked: a page asks to sign in to the account first.
    assert page.status_code == 200 and 'id="prove-control"' in page.text
    assert "prompt=login" in page.text and "return_to=/upstream/link" in page.text
    assert browser.account().status_code == 401
    assert site.sql(f"SELECT count(*) FROM upstream_identities WHERE subject = '{sub}'") == "0"

    # Attack: signing in to another account links nothing.
    browser.sign_in_with_password(other_email)
    refused(browser.get(site.base + "/upstream/link", timeout=10), 403, "not_signed_in")
    csrf = browser.get(site.base + "/api/csrf", timeout=10).json()["csrf_token"]
    response = browser.post(site.base + "/upstream/link", data={"csrf_token": csrf}, allow_redirects=False,
                            headers={"Origin": site.base}, timeout=10)
    refused(response, 403, "not_signed_in")
    assert site.sql(f"SELECT count(*) FROM upstream_identities WHERE subject = '{sub}'") == "0"

    # The owner signs in: the confirmation, then the link, then on to where the user was going.
    browser.sign_in_with_password(email)
    confirm = browser.get(site.base + "/upstream/link", timeout=10)
    assert confirm.status_code == 200 and 'id="link-form"' in confirm.text
    # Without the CSRF token: refused.
    response = browser.post(site.base + "/upstream/link", data={}, allow_redirects=False, timeout=10)
    assert response.status_code == 403
    fields = hidden_fields(confirm.text)
    response = browser.post(site.base + "/upstream/link", data=fields, allow_redirects=False,
                            headers={"Origin": site.base}, timeout=10)
    assert response.status_code == 303 and response.headers["Location"] == "/authorize?client_id=app"
    assert site.sql(f"SELECT account_id FROM upstream_identities WHERE subject = '{sub}'") == owner_id
    assert site.sql(f"SELECT count(*) FROM audit_events WHERE account_id = '{owner_id}' "
                    "AND event = 'upstream.linked' AND detail->>'how' = 'proof'") == "1"
    # Used once.
    response = browser.post(site.base + "/upstream/link", data=fields, allow_redirects=False,
                            headers={"Origin": site.base}, timeout=10)
    refused(response, 400, "invalid_state")
    # From now on the identity signs in to the owner's account directly.
    later = Browser(site.base)
    assert upstream_sign_in(site, later, sub, email).status_code == 303
    assert later.account().json()["id"] == owner_id


def test_the_proof_page_speaks_the_language_of_the_sign_in(site):
    email = new_email()
    owner = Browser(site.base)
    owner.sign_up_with_password(email)
    site.sql(f"UPDATE account_emails SET verified_at = now() WHERE normalized_email = '{email}'")
    browser = Browser(site.base)
    params = site.start(browser, ui_locales="ja")
    site.provider.answers("sub-" + uuid.uuid4().hex, email)
    page = site.callback(browser, {"state": params["state"], "code": "c"})
    assert page.status_code == 200 and "ログインして連携" in page.text and "ui_locales=ja" in page.text


def test_an_unverified_address_never_links(site):
    # Verified here, but the provider does not vouch for it.
    email = new_email()
    owner = Browser(site.base)
    owner.sign_up_with_password(email)
    owner_id = owner.account().json()["id"]
    site.sql(f"UPDATE account_emails SET verified_at = now() WHERE account_id = '{owner_id}'")
    sub = "sub-" + uuid.uuid4().hex
    browser = Browser(site.base)
    # A new account of its own (several accounts may hold an address unverified), never the owner's.
    assert upstream_sign_in(site, browser, sub, email, email_verified=False).status_code == 303
    assert browser.account().json()["id"] != owner_id
    assert site.sql(f"SELECT count(*) FROM upstream_identities WHERE account_id = '{owner_id}'") == "0"

    # Vouched for by the provider, but not verified here: no proof asked, no link either.
    email = new_email()
    holder = Browser(site.base)
    holder.sign_up_with_password(email)
    holder_id = holder.account().json()["id"]
    sub = "sub-" + uuid.uuid4().hex
    browser = Browser(site.base)
    response = upstream_sign_in(site, browser, sub, email)
    assert response.status_code == 303
    assert browser.account().json()["id"] != holder_id
    assert site.sql(f"SELECT count(*) FROM upstream_identities WHERE account_id = '{holder_id}'") == "0"


def test_an_identity_of_one_account_is_never_linked_to_another(site):
    sub = "sub-" + uuid.uuid4().hex
    first = Browser(site.base)
    assert upstream_sign_in(site, first, sub, new_email()).status_code == 303
    first_id = first.account().json()["id"]
    # Another account links "another provider" and the provider answers with the same identity.
    second = Browser(site.base)
    second.sign_up_with_password(new_email())
    page = second.get(site.base + "/account", timeout=10).text
    csrf = hidden_fields(page)["csrf_token"]
    response = second.post(site.base + "/upstream/corp/link", data={"csrf_token": csrf}, allow_redirects=False,
                           headers={"Origin": site.base}, timeout=10)
    assert response.status_code == 303, response.text[:500]
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(response.headers["Location"]).query))
    site.provider.nonce = params["nonce"]
    site.provider.answers(sub, new_email())
    refused(site.callback(second, {"state": params["state"], "code": "c"}), 403, "already_linked")
    assert site.sql(f"SELECT account_id FROM upstream_identities WHERE subject = '{sub}'") == first_id


def start_link_from_account(site, browser):
    """"Link Corp" on /account, with its CSRF token: the provider is told to answer for a new
    identity; returns the authorization request's parameters."""
    csrf = hidden_fields(browser.get(site.base + "/account", timeout=10).text)["csrf_token"]
    response = browser.post(site.base + "/upstream/corp/link", data={"csrf_token": csrf}, allow_redirects=False,
                            headers={"Origin": site.base}, timeout=10)
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(response.headers["Location"]).query))
    site.provider.nonce = params["nonce"]
    site.provider.answers("sub-" + uuid.uuid4().hex, new_email())
    return params


def test_link_another_from_the_account_page(site):
    browser = Browser(site.base)
    browser.sign_up_with_password(new_email())
    # Without the CSRF token: refused (an attacker's page cannot link its identity to a victim).
    response = browser.post(site.base + "/upstream/corp/link", data={}, allow_redirects=False, timeout=10)
    assert response.status_code == 403
    params = start_link_from_account(site, browser)
    response = site.callback(browser, {"state": params["state"], "code": "c"})
    assert response.status_code == 303 and response.headers["Location"] == "/account"
    identities = browser.get(site.base + "/api/account/identities", timeout=10).json()["identities"]
    assert len(identities) == 1
    page = browser.get(site.base + "/account", timeout=10).text
    assert 'id="identity-list"' in page and "Link Corp" in page
    # The identity is a way in: the password may go (no passkey has signed in) …
    assert browser.account().json()["can_remove_password"] is True
    assert browser.api("DELETE", "/api/password").status_code == 204
    # … and then the identity, the last way in, may not.
    response = browser.api("DELETE", f"/api/account/identities/{identities[0]['id']}")
    assert response.status_code == 409 and response.json()["error"] == "last_credential"


def test_a_link_asked_for_by_a_session_that_a_password_change_ends_is_not_kept(site):
    """The attack: a thief signed in with the old password links an identity of the thief's
    from /account while the owner changes the password, which ends the thief's session. The
    callback checked the session before the change committed; the link must not land after it,
    or the thief keeps a way in that the owner's change was meant to close."""
    email = new_email()
    thief = Browser(site.base)
    thief.sign_up_with_password(email)
    account = site.sql(f"SELECT account_id FROM account_emails WHERE normalized_email = '{email.lower()}'")
    params = start_link_from_account(site, thief)
    # The owner's change, under way: the new password, and every session of the account ended.
    change = (f"UPDATE password_credentials SET password_hash = password_hash WHERE account_id = '{account}'; "
              f"UPDATE authentication_sessions SET revoked_at = now() WHERE account_id = '{account}'")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with held_lock(site.folder, change) as lock:
            callback = pool.submit(site.callback, thief, {"state": params["state"], "code": "c"})
            waited = wait_for_lock_waiters(site.folder, 1)
            lock.release()
        response = callback.result(timeout=30)
    assert site.sql(f"SELECT count(*) FROM upstream_identities WHERE account_id = '{account}'") == "0"
    assert response.headers.get("Location") != "/account", response.status_code
    assert waited, "the callback did not wait for the change"


def test_unlinking_while_the_password_remains(site):
    browser = Browser(site.base)
    browser.sign_up_with_password(new_email())
    params = start_link_from_account(site, browser)
    assert site.callback(browser, {"state": params["state"], "code": "c"}).status_code == 303
    identity = browser.get(site.base + "/api/account/identities", timeout=10).json()["identities"][0]
    assert browser.api("DELETE", f"/api/account/identities/{identity['id']}").status_code == 204
    assert browser.get(site.base + "/api/account/identities", timeout=10).json()["identities"] == []
    account_id = browser.account().json()["id"]
    assert site.sql(f"SELECT count(*) FROM audit_events WHERE account_id = '{account_id}' "
                    "AND event = 'upstream.unlinked'") == "1"


def test_the_last_way_in_cannot_be_unlinked(site):
    browser = Browser(site.base)
    assert upstream_sign_in(site, browser, "sub-" + uuid.uuid4().hex, new_email()).status_code == 303
    identity = browser.get(site.base + "/api/account/identities", timeout=10).json()["identities"][0]
    response = browser.api("DELETE", f"/api/account/identities/{identity['id']}")
    assert response.status_code == 409 and response.json()["error"] == "last_credential"
    # Another account's identity id: not found.
    other = Browser(site.base)
    other.sign_up_with_password(new_email())
    assert other.api("DELETE", f"/api/account/identities/{identity['id']}").status_code == 404
    assert len(browser.get(site.base + "/api/account/identities", timeout=10).json()["identities"]) == 1


def test_new_accounts_through_a_provider_count_as_sign_ups(site):
    email = new_email()
    for _ in range(2):
        assert upstream_sign_in(site, Browser(site.base), "sub-" + uuid.uuid4().hex, email,
                                email_verified=False).status_code == 303
    browser = Browser(site.base)
    response = upstream_sign_in(site, browser, "sub-" + uuid.uuid4().hex, email, email_verified=False)
    refused(response, 429, "upstream_failed:too_many_sign_ups")
    assert int(response.headers["Retry-After"]) > 0
    assert browser.account().status_code == 401


def test_a_disabled_account_is_refused(site):
    sub = "sub-" + uuid.uuid4().hex
    browser = Browser(site.base)
    assert upstream_sign_in(site, browser, sub, new_email()).status_code == 303
    account_id = browser.account().json()["id"]
    site.sql(f"UPDATE accounts SET disabled_at = now() WHERE id = '{account_id}'")
    again = Browser(site.base)
    refused(upstream_sign_in(site, again, sub), 403, "account_disabled")
    assert again.account().status_code == 401
