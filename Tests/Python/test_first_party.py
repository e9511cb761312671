"""First-party native apps at the authorization challenge endpoint
(draft-ietf-oauth-first-party-apps), driven as an app drives it against a real
`auth-server serve`: form posts to /authorize-challenge, passkey assertions and attestations
from the software authenticator (softauthn.py), the code redeemed at /token with authlib, the
ID token checked with PyJWT, /userinfo with the access token."""

import base64
import hashlib
import json
import secrets
import shutil
import tempfile
import uuid
from pathlib import Path

import jwt as pyjwt
import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session

from conftest import PASSWORD, Browser
from auth_server import ROOT, free_port, serve
from softauthn import SoftAuthenticator
from dpop_client import DPoPKey

APP = "fp-app"
PASSWORD_APP = "fp-password-app"
THIRD_PARTY = "fp-third-party"
REDIRECT = "com.example.fp:/callback"


@pytest.fixture(scope="module")
def env():
    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix="auth-server-first-party-")
    Path(data_dir).chmod(0o755)  # the embedded cluster may run as the postgres user
    native = {
        "application_type": "native", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"], "scope": "openid profile email offline_access",
    }
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(data_dir) / "var"),
        "public_dir": str(ROOT / "public"),
        "clients": [
            native | {"client_id": APP, "client_name": "First-Party App", "first_party": True},
            native | {"client_id": PASSWORD_APP, "client_name": "Password App", "first_party": True,
                      "first_party_password_step": True},
            native | {"client_id": THIRD_PARTY, "client_name": "Third-Party App"},
        ],
    }
    try:
        with serve(config, data_dir):
            discovery = requests.get(base + "/.well-known/openid-configuration", timeout=10).json()
            yield {"base": base, "discovery": discovery}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


class App:
    """A first-party app: its client id, PKCE verifier, and the auth_session it keeps."""

    def __init__(self, env, client_id=APP, key=None):
        self.env = env
        self.client_id = client_id
        self.key = key  # a DPoP key (RFC 9449): every request then carries a proof
        self.verifier = secrets.token_urlsafe(48)
        self.auth_session = None
        self.endpoint = env["discovery"]["authorization_challenge_endpoint"]

    def post(self, form):
        headers = {"DPoP": self.key.proof("POST", self.endpoint)} if self.key else {}
        response = requests.post(self.endpoint, data={"client_id": self.client_id} | form, headers=headers,
                                 timeout=10)
        assert response.headers["Content-Type"].startswith("application/json")
        assert response.headers["Cache-Control"] == "no-store"
        body = response.json()
        if "auth_session" in body:
            self.auth_session = body["auth_session"]
        return response, body

    def begin(self, scope="openid profile email offline_access"):
        challenge = base64.urlsafe_b64encode(hashlib.sha256(self.verifier.encode()).digest()).rstrip(b"=").decode()
        return self.post({"response_type": "code", "scope": scope, "code_challenge": challenge,
                          "code_challenge_method": "S256"})

    def step(self, step, **form):
        return self.post({"auth_session": self.auth_session, "step": step} | form)

    def redeem(self, code):
        """The token request as any OAuth library makes it (authlib), with the PKCE verifier and, as
        the draft (§6) has it, no redirect_uri."""
        client = OAuth2Session(self.client_id, token_endpoint_auth_method="none")
        return client.fetch_token(self.env["discovery"]["token_endpoint"], code=code, code_verifier=self.verifier)


def id_token_claims(env, token, client_id):
    keys = pyjwt.PyJWKClient(env["discovery"]["jwks_uri"])
    key = keys.get_signing_key_from_jwt(token["id_token"])
    return pyjwt.decode(token["id_token"], key.key, algorithms=["RS256", "ES256", "PS256", "EdDSA"],
                        audience=client_id, issuer=env["base"])


def userinfo(env, token):
    response = requests.get(env["discovery"]["userinfo_endpoint"],
                            headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def account_with_passkey(env):
    """An account made on the login pages (password, then a passkey added there)."""
    browser = Browser(env["base"])
    email = browser.sign_up()
    authenticator = SoftAuthenticator()
    start = browser.post_json("/api/passkeys/registration/start", {}).json()
    credential = authenticator.create(start["options"], env["base"])
    finish = browser.post_json("/api/passkeys/registration/finish",
                               {"challenge_id": start["challenge_id"], "credential": credential})
    assert finish.status_code == 201, finish.text
    return email, authenticator


def test_discovery_names_the_endpoint(env):
    assert env["discovery"]["authorization_challenge_endpoint"] == env["base"] + "/authorize-challenge"


def test_passkey_sign_in_to_tokens_and_userinfo(env):
    email, authenticator = account_with_passkey(env)
    app = App(env)
    response, body = app.begin()
    assert response.status_code == 403
    assert body["error"] == "insufficient_authorization"
    assert body["steps"] == ["passkey", "sign_up", "recovery"]
    options = body["passkey_request_options"]
    assert options["rpId"] == "localhost" and options["userVerification"] == "required"

    assertion = authenticator.get(options, env["base"])
    response, body = app.step("passkey", credential=json.dumps(assertion))
    assert response.status_code == 200, body
    assert set(body) == {"authorization_code"}

    token = app.redeem(body["authorization_code"])
    assert token["token_type"].lower() == "bearer"
    assert "refresh_token" in token
    claims = id_token_claims(env, token, APP)
    assert "sid" in claims
    info = userinfo(env, token)
    assert info["sub"] == claims["sub"]
    assert info["email"] == email

    # The auth_session that produced the code is spent.
    response, body = app.step("passkey", credential=json.dumps(authenticator.get(options, env["base"])))
    assert response.status_code == 400 and body["error"] == "invalid_session"


def test_passkey_sign_up_through_the_loop(env):
    app = App(env)
    app.begin()
    email = f"fp-{uuid.uuid4().hex[:8]}@example.com"
    response, body = app.step("sign_up", email=email, display_name="App User")
    assert response.status_code == 403, body
    assert body["steps"] == ["sign_up_passkey"]
    authenticator = SoftAuthenticator()
    credential = authenticator.create(body["passkey_creation_options"], env["base"])
    response, body = app.step("sign_up_passkey", credential=json.dumps(credential))
    assert response.status_code == 200, body
    token = app.redeem(body["authorization_code"])
    assert userinfo(env, token)["email"] == email

    # The new passkey signs in through the loop as well.
    again = App(env)
    _, body = again.begin()
    response, body = again.step("passkey", credential=json.dumps(authenticator.get(body["passkey_request_options"],
                                                                                   env["base"])))
    assert response.status_code == 200, body


def test_password_step_when_the_client_enables_it(env):
    browser = Browser(env["base"])
    email = browser.sign_up()
    app = App(env, PASSWORD_APP)
    _, body = app.begin()
    assert body["steps"] == ["passkey", "password", "sign_up", "recovery"]
    response, body = app.step("password", username=email, password="not the password")
    assert response.status_code == 403 and body["error"] == "insufficient_authorization"
    response, body = app.step("password", username=email, password=PASSWORD)
    assert response.status_code == 200, body
    token = app.redeem(body["authorization_code"])
    assert id_token_claims(env, token, PASSWORD_APP)["amr"] == ["pwd"]


def test_password_step_refused_without_the_flag(env):
    browser = Browser(env["base"])
    email = browser.sign_up()
    app = App(env)
    app.begin()
    response, body = app.step("password", username=email, password=PASSWORD)
    assert response.status_code == 400
    assert body["error"] == "unauthorized_client"
    assert "authorization_code" not in body


def test_refusals(env):
    # Not first-party.
    response, body = App(env, THIRD_PARTY).begin()
    assert response.status_code == 400 and body["error"] == "unauthorized_client"
    # No PKCE.
    response, body = App(env).post({"scope": "openid"})
    assert response.status_code == 400 and body["error"] == "invalid_request"
    # Another client's auth_session.
    victim = App(env)
    victim.begin()
    thief = App(env, PASSWORD_APP)
    thief.auth_session = victim.auth_session
    response, body = thief.step("recovery")
    assert response.status_code == 400 and body["error"] == "invalid_session"
    # Recovery goes to the browser.
    response, body = victim.step("recovery")
    assert response.status_code == 403 and body["error"] == "redirect_to_web"


def test_code_needs_the_verifier_and_its_own_client(env):
    _, authenticator = account_with_passkey(env)
    app = App(env)
    _, body = app.begin()
    _, body = app.step("passkey", credential=json.dumps(authenticator.get(body["passkey_request_options"], env["base"])))
    code = body["authorization_code"]
    token_endpoint = env["discovery"]["token_endpoint"]
    wrong_client = requests.post(token_endpoint, data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": PASSWORD_APP,
        "code_verifier": app.verifier}, timeout=10)
    assert wrong_client.status_code == 400 and wrong_client.json()["error"] == "invalid_grant"

    second = App(env)
    _, body = second.begin()
    _, body = second.step("passkey", credential=json.dumps(authenticator.get(body["passkey_request_options"],
                                                                             env["base"])))
    wrong_verifier = requests.post(token_endpoint, data={
        "grant_type": "authorization_code", "code": body["authorization_code"], "redirect_uri": REDIRECT,
        "client_id": APP, "code_verifier": secrets.token_urlsafe(48)}, timeout=10)
    assert wrong_verifier.status_code == 400 and wrong_verifier.json()["error"] == "invalid_grant"


def test_a_dpop_bound_sign_in_needs_the_key_at_every_step_and_for_its_code(env):
    """Draft §9.6.1 and RFC 9449 §10: the app's first request carries a DPoP proof; whoever
    copies the auth_session or the code without the key gets nowhere."""
    _, authenticator = account_with_passkey(env)
    key = DPoPKey()
    app = App(env, key=key)
    _, body = app.begin()
    options = body["passkey_request_options"]
    # The attacker replays the step with the copied auth_session, without a proof, with their
    # own key, or naming the app's key by its thumbprint (`dpop_jkt`, no secret): refused, and
    # the app's value stays usable.
    for attacker, extra in ((App(env), {}), (App(env, key=DPoPKey()), {}), (App(env), {"dpop_jkt": key.thumbprint})):
        attacker.auth_session = app.auth_session
        response, refused = attacker.step("passkey", credential="{}", **extra)
        assert response.status_code == 400 and refused["error"] == "invalid_session", (extra, refused)
    _, body = app.step("passkey", credential=json.dumps(authenticator.get(options, env["base"])))
    code = body["authorization_code"]
    token_endpoint = env["discovery"]["token_endpoint"]

    def redeem(proof_key):
        return requests.post(token_endpoint, headers={"DPoP": proof_key.proof("POST", token_endpoint)}, timeout=10,
                             data={"grant_type": "authorization_code", "code": code, "client_id": APP,
                                   "code_verifier": app.verifier})

    stolen = redeem(DPoPKey())
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant", stolen.text
    # The code is burnt by the refused redemption, like any refused code: a fresh sign-in works.
    app = App(env, key=key)
    _, body = app.begin()
    _, body = app.step("passkey", credential=json.dumps(authenticator.get(body["passkey_request_options"], env["base"])))
    code = body["authorization_code"]
    token = redeem(key)
    assert token.status_code == 200 and token.json()["token_type"] == "DPoP", token.text
