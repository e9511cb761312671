"""Sign in with Apple from a native app (RFC 8693 token exchange at /token) and Apple's
server-to-server notifications, against the Apple stand-in (Tests/pysupport/apple_standin.py)
and a real `auth-server serve`."""

import concurrent.futures
import contextlib
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

import jwt as pyjwt
import pytest
import requests

from auth_server import ROOT, binary, free_port, held_lock, psql, serve, wait_for_lock_waiters  # noqa: E402  (conftest puts Tests/pysupport on the path)
from conftest import Browser  # noqa: E402

sys.path.insert(0, str(ROOT / "Tests" / "Conformance"))
from conformance.tls import make_certificates  # noqa: E402
from apple_standin import APPLE_ISSUER, AppleStandIn, new_rsa_key  # noqa: E402

BUNDLE_ID = "com.example.notes"
OTHER_TEAM_BUNDLE = "com.example.other"
SERVICES_ID = "com.example.web"
APP_CLIENT = "notes-app"
PLAIN_CLIENT = "plain-app"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


@pytest.fixture(scope="module")
def standin_only():
    folder = tempfile.mkdtemp(prefix="apple-standin-")
    paths = make_certificates(folder)
    standin = AppleStandIn(paths)
    try:
        yield standin, paths
    finally:
        standin.close()
        shutil.rmtree(folder, ignore_errors=True)


# The stand-in itself: Apple's shapes, and the refusals the server's own tests rely on.

def test_standin_keys_code_exchange_and_revoke(standin_only):
    standin, paths = standin_only
    keys = requests.get(standin.endpoints["keys"], verify=str(paths["ca"]), timeout=10).json()
    assert {key["kid"] for key in keys["keys"]} == set(standin.signing_keys)
    code = standin.authorization_code(BUNDLE_ID, "001.sub", email="a@example.com", nonce="n-hash")
    secret = standin.client_secret(BUNDLE_ID)
    form = {"grant_type": "authorization_code", "code": code, "client_id": BUNDLE_ID, "client_secret": secret}
    answer = requests.post(standin.endpoints["token"], data=form, verify=str(paths["ca"]), timeout=10)
    assert answer.status_code == 200, answer.text
    tokens = answer.json()
    assert tokens["token_type"] == "Bearer" and tokens["refresh_token"]
    key = pyjwt.PyJWKSet.from_dict(keys)[pyjwt.get_unverified_header(tokens["id_token"])["kid"]]
    claims = pyjwt.decode(tokens["id_token"], key.key, algorithms=["RS256"], audience=BUNDLE_ID, issuer=APPLE_ISSUER)
    assert claims["sub"] == "001.sub" and claims["nonce"] == "n-hash"
    # The code is good once.
    again = requests.post(standin.endpoints["token"], data=form, verify=str(paths["ca"]), timeout=10)
    assert again.status_code == 400 and again.json() == {"error": "invalid_grant"}
    refreshed = requests.post(standin.endpoints["token"], verify=str(paths["ca"]), timeout=10, data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": BUNDLE_ID,
        "client_secret": secret})
    assert refreshed.status_code == 200 and "id_token" in refreshed.json()
    revoked = requests.post(standin.endpoints["revoke"], verify=str(paths["ca"]), timeout=10, data={
        "client_id": BUNDLE_ID, "client_secret": secret, "token": tokens["refresh_token"],
        "token_type_hint": "refresh_token"})
    assert revoked.status_code == 200
    assert standin.revoked[-1]["token"] == tokens["refresh_token"]


def test_standin_refuses_client_secrets_of_another_team_or_client(standin_only):
    standin, paths = standin_only
    from cryptography.hazmat.primitives import serialization
    foreign = serialization.load_pem_private_key(standin.other_team_p8_path.read_bytes(), None)
    for secret in (standin.client_secret(BUNDLE_ID, key=foreign),
                   standin.client_secret(BUNDLE_ID, team_id="OTHERTEAM1"),
                   standin.client_secret("com.other.app"),
                   standin.client_secret(BUNDLE_ID, lifetime=15777001)):
        code = standin.authorization_code(BUNDLE_ID, "001.sub")
        answer = requests.post(standin.endpoints["token"], verify=str(paths["ca"]), timeout=10, data={
            "grant_type": "authorization_code", "code": code, "client_id": BUNDLE_ID, "client_secret": secret})
        assert answer.status_code == 400 and answer.json() == {"error": "invalid_client"}


def test_standin_notification_shape(standin_only):
    standin, _ = standin_only
    body = standin.notification("com.example.web", "email-disabled", "001.sub", email="x@privaterelay.appleid.com",
                                is_private_email=True)
    claims = pyjwt.decode(body["payload"], standin.signing_keys[standin.default_kid].public_key(),
                          algorithms=["RS256"], audience="com.example.web", issuer=APPLE_ISSUER)
    assert claims["jti"] and isinstance(claims["events"], str)
    event = json.loads(claims["events"])
    assert event["type"] == "email-disabled" and event["sub"] == "001.sub" and event["is_private_email"] == "true"


def test_standin_authorize_page_posts_user_only_the_first_time(standin_only):
    standin, paths = standin_only
    query = {"client_id": "com.example.web", "redirect_uri": "https://rp.example/cb", "response_type": "code",
             "scope": "name email", "response_mode": "form_post", "state": "s1", "nonce": "n1"}
    page = requests.get(standin.endpoints["authorize"], params=query, verify=str(paths["ca"]), timeout=10).text
    assert 'id="apple-email"' in page and 'id="apple-continue"' in page
    first = requests.post(standin.endpoints["authorize"], data=query | {"apple_email": "first@example.com"},
                          verify=str(paths["ca"]), timeout=10).text
    second = requests.post(standin.endpoints["authorize"], data=query | {"apple_email": "first@example.com"},
                           verify=str(paths["ca"]), timeout=10).text
    assert 'name="user"' in first and 'name="user"' not in second
    assert 'name="state" value="s1"' in second and 'action="https://rp.example/cb"' in second


# The server with Sign in with Apple configured against the stand-in.

def run_sql(folder, sql):
    return psql(folder, sql)

@pytest.fixture(scope="module")
def env():
    with apple_server() as running:
        yield running


@contextlib.contextmanager
def apple_server(other_team_key=False):
    """A server with Sign in with Apple against a fresh stand-in; with `other_team_key` its
    developer key is another team's (Apple refuses its client secrets)."""
    port = free_port()
    base = f"http://localhost:{port}"
    folder = tempfile.mkdtemp(prefix="auth-server-apple-")
    os.chmod(folder, 0o755)  # the embedded cluster may run as the postgres user
    paths = make_certificates(folder)
    standin = AppleStandIn(paths)
    native = {"application_type": "native", "redirect_uris": ["http://127.0.0.1/callback"],
              "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
              "scope": "openid profile email offline_access", "first_party": True}
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(folder) / "var"),
        "public_dir": str(ROOT / "public"),
        "upstream_providers": [{
            "id": "apple", "type": "apple", "team_id": standin.team_id, "services_id": SERVICES_ID,
            "bundle_ids": [BUNDLE_ID, OTHER_TEAM_BUNDLE], "key_id": standin.key_id,
            "private_key_file": str(standin.other_team_p8_path if other_team_key else standin.p8_path),
            "endpoints_for_tests": standin.endpoints,
            "allow_loopback_for_tests": True, "ca_file": str(paths["ca"]),
        }],
        "clients": [
            native | {"client_id": APP_CLIENT,
                      "apple_app_ids": [f"{standin.team_id}.{BUNDLE_ID}", f"OTHERTEAM1.{OTHER_TEAM_BUNDLE}"]},
            native | {"client_id": PLAIN_CLIENT},
        ],
    }
    try:
        with serve(config, folder):
            discovery = requests.get(base + "/.well-known/openid-configuration", timeout=10).json()
            yield {"base": base, "standin": standin, "folder": folder, "discovery": discovery}
    finally:
        standin.close()
        shutil.rmtree(folder, ignore_errors=True)


class AppSignIn:
    """What an app holds after ASAuthorizationAppleIDProvider: a raw nonce (its SHA-256 went to
    Apple), the identityToken and the authorizationCode."""

    def __init__(self, standin, sub=None, email=None, aud=BUNDLE_ID, **token_options):
        self.sub = sub or AppleStandIn.sub_for(f"{uuid.uuid4().hex}@example.com")
        self.email = email or f"apple-{uuid.uuid4().hex[:8]}@privaterelay.appleid.com"
        self.raw_nonce = secrets.token_urlsafe(24)
        hashed = hashlib.sha256(self.raw_nonce.encode()).hexdigest()
        options = {"email": self.email, "is_private_email": True, "nonce": hashed} | token_options
        self.identity_token = standin.identity_token(aud, self.sub, **options)
        self.code = standin.authorization_code(aud, self.sub, email=self.email, nonce=hashed)


def exchange(env, sign_in, client_id=APP_CLIENT, **overrides):
    form = {"grant_type": TOKEN_EXCHANGE, "client_id": client_id, "subject_token": sign_in.identity_token,
            "subject_token_type": ID_TOKEN_TYPE, "apple_authorization_code": sign_in.code,
            "apple_nonce": sign_in.raw_nonce, "scope": "openid email profile offline_access"} | overrides
    return requests.post(env["discovery"]["token_endpoint"], data=form, timeout=20)


def refused(answer, error="invalid_grant", words=""):
    assert answer.status_code in (400, 401), answer.text
    body = answer.json()
    assert body["error"] == error, body
    assert words in body.get("error_description", ""), body
    return body


def test_discovery_lists_token_exchange(env):
    assert TOKEN_EXCHANGE in env["discovery"]["grant_types_supported"]


def test_token_exchange_signs_in_and_creates_the_account(env):
    sign_in = AppSignIn(env["standin"])
    answer = exchange(env, sign_in)
    assert answer.status_code == 200, answer.text
    tokens = answer.json()
    assert tokens["issued_token_type"] == ACCESS_TOKEN_TYPE and tokens["token_type"] == "Bearer"
    assert tokens["refresh_token"] and tokens["id_token"]
    assert answer.headers["Cache-Control"] == "no-store"
    claims = pyjwt.decode(tokens["id_token"], options={"verify_signature": False})
    assert claims["aud"] == APP_CLIENT and claims["iss"] == env["discovery"]["issuer"]
    info = requests.get(env["discovery"]["userinfo_endpoint"], timeout=10,
                        headers={"Authorization": "Bearer " + tokens["access_token"]}).json()
    assert info["sub"] == claims["sub"]
    assert info["email"] == sign_in.email and info["email_verified"] is True
    # The link, with Apple's refresh token sealed (never in the clear) for the app's bundle id.
    row = run_sql(env["folder"], f"SELECT account_id, provider, refresh_token_client_id, is_private_email, "
                                 f"encode(refresh_token_ciphertext, 'hex') FROM upstream_identities "
                                 f"WHERE subject = '{sign_in.sub}'").split("|")
    assert row[0] == claims["sub"] and row[1] == "apple" and row[2] == BUNDLE_ID and row[3] == "t"
    apple_refresh = env["standin"].token_requests  # the stand-in saw one successful code exchange
    assert any(r["client_id"] == BUNDLE_ID and r["outcome"] == "ok" for r in apple_refresh)
    assert len(row[4]) > 0
    issued = [t for t, g in env["standin"].refresh_tokens.items() if g["sub"] == sign_in.sub]
    assert issued and issued[0].encode().hex() not in row[4]
    # A second sign-in of the same Apple user reaches the same account.
    again = exchange(env, AppSignIn(env["standin"], sub=sign_in.sub, email=sign_in.email))
    assert again.status_code == 200, again.text
    assert pyjwt.decode(again.json()["id_token"], options={"verify_signature": False})["sub"] == claims["sub"]
    # Apple's newer refresh token replaces the kept one; the first is not revoked at Apple (a
    # revocation would end the user's authorization of the app there).
    assert not any(r["token"] == issued[0] for r in env["standin"].revoked)
    kept = run_sql(env["folder"], f"SELECT encode(refresh_token_ciphertext, 'hex') FROM upstream_identities "
                                  f"WHERE subject = '{sign_in.sub}'")
    assert kept and kept != row[4]
    events = run_sql(env["folder"], f"SELECT event || ':' || coalesce(detail->>'method', '') FROM audit_events "
                                    f"WHERE account_id = '{claims['sub']}' ORDER BY id")
    assert "account.created:apple" in events and events.count("sign_in.succeeded:apple_token_exchange") == 2


def test_replayed_authorization_code_is_refused(env):
    sign_in = AppSignIn(env["standin"])
    assert exchange(env, sign_in).status_code == 200
    refused(exchange(env, sign_in), words="Apple refused the authorization code")


def test_token_for_another_app_is_refused(env):
    sign_in = AppSignIn(env["standin"], aud="com.example.mail")
    refused(exchange(env, sign_in), words="issued to another app")


def test_token_of_another_team_is_refused(env):
    # The client names com.example.other, but as an app of another team than the provider's.
    sign_in = AppSignIn(env["standin"], aud=OTHER_TEAM_BUNDLE)
    refused(exchange(env, sign_in), words="issued to another app")


def test_expired_token_is_refused(env):
    sign_in = AppSignIn(env["standin"], exp_in=-300, iat=int(time.time()) - 900)
    refused(exchange(env, sign_in), words="expired")


def test_wrong_nonce_is_refused(env):
    sign_in = AppSignIn(env["standin"])
    refused(exchange(env, sign_in, apple_nonce=secrets.token_urlsafe(24)), words="nonce")
    # A token without a nonce cannot be bound to the request either.
    refused(exchange(env, AppSignIn(env["standin"], nonce=None)), words="nonce")
    # The hash itself is not the raw nonce.
    refused(exchange(env, sign_in, apple_nonce=hashlib.sha256(sign_in.raw_nonce.encode()).hexdigest()),
            words="nonce")


def test_unknown_key_is_refused(env):
    sign_in = AppSignIn(env["standin"], kid="NoSuchKey1", key=new_rsa_key())
    refused(exchange(env, sign_in), words="key Apple does not publish")


def test_a_key_apple_rotates_in_is_fetched_once_its_kid_is_seen(env):
    """Apple's keys are cached; a token signed by a key published since is accepted once the
    server fetches the set again for its unknown `kid` (at most every few seconds), and made-up
    `kid`s do not make it fetch on every request."""
    standin = env["standin"]
    standin.signing_keys["AppleKeyC3"] = new_rsa_key()
    fetches = standin.key_fetches
    deadline = time.time() + 15
    while True:
        answer = exchange(env, AppSignIn(standin, kid="AppleKeyC3"))
        if answer.status_code == 200 or time.time() > deadline:
            break
        time.sleep(1)
    assert answer.status_code == 200, answer.text
    assert standin.key_fetches > fetches
    fetched = standin.key_fetches
    for _ in range(4):
        refused(exchange(env, AppSignIn(standin, kid="Made" + uuid.uuid4().hex[:6], key=new_rsa_key())),
                words="key Apple does not publish")
    assert standin.key_fetches <= fetched + 1


def test_token_signed_by_another_key_with_a_known_kid_is_refused(env):
    sign_in = AppSignIn(env["standin"], kid="AppleKeyA1", key=new_rsa_key())
    refused(exchange(env, sign_in), words="signature")


def test_token_from_another_issuer_is_refused(env):
    sign_in = AppSignIn(env["standin"], iss="https://evil.example")
    refused(exchange(env, sign_in), words="not issued by Apple")


def test_code_of_another_user_is_refused(env):
    first, second = AppSignIn(env["standin"]), AppSignIn(env["standin"])
    refused(exchange(env, first, apple_authorization_code=second.code, apple_nonce=first.raw_nonce),
            words="another Apple user")


def test_client_without_apple_app_ids_is_refused(env):
    sign_in = AppSignIn(env["standin"])
    refused(exchange(env, sign_in, client_id=PLAIN_CLIENT), error="unauthorized_client")
    # The code was not spent on Apple's side.
    assert exchange(env, sign_in).status_code == 200


def test_malformed_requests_are_refused(env):
    sign_in = AppSignIn(env["standin"])
    refused(exchange(env, sign_in, subject_token_type=ACCESS_TOKEN_TYPE), error="invalid_request")
    refused(exchange(env, sign_in, apple_authorization_code=""), error="invalid_request",
            words="apple_authorization_code")
    refused(exchange(env, sign_in, subject_token="not-a-jwt"), words="not a valid JWT")


def test_existing_verified_account_is_not_linked(env):
    email = f"owner-{uuid.uuid4().hex[:8]}@example.com"
    browser = Browser(env["base"])
    browser.sign_up(email)
    run_sql(env["folder"], f"UPDATE account_emails SET verified_at = now() WHERE normalized_email = '{email}'")
    sign_in = AppSignIn(env["standin"], email=email, is_private_email=False)
    body = refused(exchange(env, sign_in), words="Sign in to it on the web and link Apple")
    assert body
    assert run_sql(env["folder"], f"SELECT count(*) FROM upstream_identities WHERE subject = '{sign_in.sub}'") == "0"
    assert run_sql(env["folder"], f"SELECT count(*) FROM accounts a JOIN account_emails e ON e.account_id = a.id "
                                  f"WHERE e.normalized_email = '{email}'") == "1"
    # The code was redeemed at Apple; the refresh token Apple issued for it is revoked, not kept.
    issued = [t for t, g in env["standin"].issued_refresh_tokens.items() if g["sub"] == sign_in.sub]
    assert len(issued) == 1
    revoked = {"client_id": BUNDLE_ID, "token": issued[0], "token_type_hint": "refresh_token"}
    deadline = time.time() + 15
    while revoked not in env["standin"].revoked and time.time() < deadline:
        time.sleep(0.2)
    assert revoked in env["standin"].revoked



def test_deleting_the_account_revokes_its_apple_token_at_apple(env):
    """Apple requires revoking its tokens when the account is deleted: the operator's
    `users delete` revokes the sealed refresh token with the app's bundle id after the commit."""
    sign_in = AppSignIn(env["standin"])
    answer = exchange(env, sign_in)
    assert answer.status_code == 200, answer.text
    account = pyjwt.decode(answer.json()["id_token"], options={"verify_signature": False})["sub"]
    issued = [t for t, g in env["standin"].refresh_tokens.items() if g["sub"] == sign_in.sub]
    assert len(issued) == 1
    assert not any(r["token"] == issued[0] for r in env["standin"].revoked)
    result = subprocess.run([binary(), "users", "delete", "--config", str(Path(env["folder"]) / "config.json"),
                             account, "--yes"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "revoked 1 of 1 upstream refresh tokens" in result.stdout
    assert {"client_id": BUNDLE_ID, "token": issued[0], "token_type_hint": "refresh_token"} in env["standin"].revoked
    assert run_sql(env["folder"], f"SELECT count(*) FROM upstream_identities WHERE subject = '{sign_in.sub}'") == "0"
    # Our own tokens died with the account.
    info = requests.get(env["discovery"]["userinfo_endpoint"], timeout=10,
                        headers={"Authorization": "Bearer " + answer.json()["access_token"]})
    assert info.status_code == 401


def test_a_deletion_while_apple_is_down_is_revoked_by_the_server_later(env):
    """The revocation is queued in the deletion's transaction: when Apple cannot be reached,
    `users delete` says so and the running server's worker revokes the token on a retry."""
    sign_in = AppSignIn(env["standin"])
    answer = exchange(env, sign_in)
    assert answer.status_code == 200, answer.text
    account = pyjwt.decode(answer.json()["id_token"], options={"verify_signature": False})["sub"]
    issued = [t for t, g in env["standin"].refresh_tokens.items() if g["sub"] == sign_in.sub]
    env["standin"].revocations_unavailable = 1
    result = subprocess.run([binary(), "users", "delete", "--config", str(Path(env["folder"]) / "config.json"),
                             account, "--yes"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "revoked 0 of 1 upstream refresh tokens at the provider (the server retries the rest)" in result.stdout
    revoked = {"client_id": BUNDLE_ID, "token": issued[0], "token_type_hint": "refresh_token"}
    deadline = time.time() + 30
    while revoked not in env["standin"].revoked and time.time() < deadline:
        time.sleep(0.2)
    assert revoked in env["standin"].revoked
    assert run_sql(env["folder"], "SELECT count(*) FROM upstream_token_revocations") == "0"


def test_the_form_post_relay_refuses_unknown_states_and_cross_site_continues(env):
    """Apple's form_post arrives cross-site at /callback, which only relays an open state of this
    provider; the relayed POST to /continue must come from this server's own page: another
    origin or a cross-site fetch is refused, and the sign-in it aimed at stays open."""
    browser = requests.Session()
    started = browser.get(env["base"] + "/upstream/apple/start", params={"return_to": "/account"},
                          allow_redirects=False, timeout=10)
    assert started.status_code == 303, started.text[:300]
    state = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(started.headers["Location"]).query))["state"]

    unknown = requests.post(env["base"] + "/upstream/apple/callback", data={"state": "x" * 43, "code": "c"},
                            allow_redirects=False, timeout=10)
    assert unknown.status_code == 400 and 'id="error-code">invalid_state<' in unknown.text

    relayed = requests.post(env["base"] + "/upstream/apple/callback", data={"state": state, "code": "c"},
                            allow_redirects=False, timeout=10)
    assert relayed.status_code == 200 and 'action="/upstream/apple/continue"' in relayed.text

    for headers in ({"Origin": "https://attacker.example"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Origin": env["base"], "Sec-Fetch-Site": "same-site"}):
        forged = browser.post(env["base"] + "/upstream/apple/continue", data={"state": state, "code": "c"},
                              headers=headers, allow_redirects=False, timeout=10)
        assert forged.status_code == 403, (headers, forged.text[:300])
        assert 'id="error-code">other_browser<' in forged.text
    still_open = requests.post(env["base"] + "/upstream/apple/callback", data={"state": state, "code": "c"},
                               allow_redirects=False, timeout=10)
    assert still_open.status_code == 200, still_open.text[:300]


# Server-to-server notifications.

def linked_account(env):
    """An account made by a token exchange: its id, the Apple sign-in, and our tokens."""
    sign_in = AppSignIn(env["standin"])
    answer = exchange(env, sign_in)
    assert answer.status_code == 200, answer.text
    tokens = answer.json()
    account = pyjwt.decode(tokens["id_token"], options={"verify_signature": False})["sub"]
    return account, sign_in, tokens


def notify(env, body):
    return requests.post(env["base"] + "/upstream/apple/notifications", json=body, timeout=10)


def notification_events(env, account):
    return run_sql(env["folder"], f"SELECT detail->>'type' || ':' || (detail->>'action') FROM audit_events "
                                  f"WHERE event = 'upstream.apple_notification' AND account_id = '{account}' "
                                  f"ORDER BY id").splitlines()


def link_state(env, sign_in):
    return run_sql(env["folder"], f"SELECT email_deliverable FROM upstream_identities WHERE subject = '{sign_in.sub}'")


def test_email_disabled_and_enabled_follow_the_relay(env):
    account, sign_in, _ = linked_account(env)
    standin = env["standin"]
    body = standin.notification(SERVICES_ID, "email-disabled", sign_in.sub, email=sign_in.email, is_private_email=True)
    answer = notify(env, body)
    assert answer.status_code == 200 and answer.json() == {"status": "processed"}, answer.text
    assert link_state(env, sign_in) == "f"
    # Mail to the relay address is not sent while Apple reports it undeliverable.
    browser = Browser(env["base"])
    assert browser.post_json("/api/recovery/start", {"email": sign_in.email}).status_code in (200, 202)
    log = Path(env["folder"]) / "server.log"
    deadline = time.time() + 15  # the code's mail goes out after the answer
    while "reason=undeliverable_relay" not in log.read_text() and time.time() < deadline:
        time.sleep(0.1)
    assert "reason=undeliverable_relay" in log.read_text()
    answer = notify(env, standin.notification(BUNDLE_ID, "email-enabled", sign_in.sub, email=sign_in.email,
                                              is_private_email=True))
    assert answer.status_code == 200, answer.text
    assert link_state(env, sign_in) == "t"
    assert notification_events(env, account) == ["email-disabled:email_undeliverable", "email-enabled:email_deliverable"]


def assert_tokens_ended(env, tokens):
    """The app's refresh token is refused and its access token no longer reads userinfo."""
    refresh = requests.post(env["discovery"]["token_endpoint"], timeout=10, data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": APP_CLIENT})
    refused(refresh)
    info = requests.get(env["discovery"]["userinfo_endpoint"], timeout=10,
                        headers={"Authorization": "Bearer " + tokens["access_token"]})
    assert info.status_code == 401


def test_consent_revoked_unlinks_and_ends_what_came_through_apple(env):
    """Apple: treat consent-revoked as a sign-out (TN3194). The tokens the app got by exchanging
    its Apple sign-in end with the link."""
    account, sign_in, tokens = linked_account(env)
    answer = notify(env, env["standin"].notification(SERVICES_ID, "consent-revoked", sign_in.sub))
    assert answer.status_code == 200, answer.text
    assert link_state(env, sign_in) == ""
    assert notification_events(env, account) == ["consent-revoked:unlinked_signed_out"]
    assert_tokens_ended(env, tokens)


def test_account_delete_unlinks_and_ends_sessions_and_tokens(env):
    account, sign_in, tokens = linked_account(env)
    answer = notify(env, env["standin"].notification(BUNDLE_ID, "account-delete", sign_in.sub))
    assert answer.status_code == 200, answer.text
    assert link_state(env, sign_in) == ""
    assert notification_events(env, account) == ["account-delete:unlinked_signed_out"]
    assert_tokens_ended(env, tokens)


def live_families(env, account):
    return run_sql(env["folder"], f"SELECT count(*) FROM refresh_token_families "
                                  f"WHERE account_id = '{account}' AND revoked_at IS NULL")


def assert_nothing_live(env, account, answer):
    """Nothing the exchange `answer` answered still works: it was refused, or its tokens are ended."""
    if answer.status_code == 200:
        assert_tokens_ended(env, answer.json())
    else:
        refused(answer)
    assert live_families(env, account) == "0"


def test_an_exchange_under_way_when_the_account_is_disabled_leaves_nothing_live(env):
    """The attack: the app keeps exchanging an Apple sign-in of an account an operator is
    disabling. An exchange that looked at the account before the disable committed, and issues
    after it, must not leave a live refresh token on the disabled account. The test holds the
    link's row so that the exchange waits between its look-up of the account and its tokens."""
    account, first, _ = linked_account(env)
    again = AppSignIn(env["standin"], sub=first.sub, email=first.email)
    command = [binary(), "users", "disable", "--config", str(Path(env["folder"]) / "config.json"), account]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        with held_lock(env["folder"], f"SELECT 1 FROM upstream_identities WHERE subject = '{first.sub}' FOR UPDATE") as lock:
            answer = pool.submit(exchange, env, again)
            assert wait_for_lock_waiters(env["folder"], 1), "the exchange did not reach the link"
            disable = pool.submit(subprocess.run, command, capture_output=True, text=True, timeout=60)
            # The disable either finishes at once or waits for the exchange.
            deadline = time.time() + 10
            while not disable.done() and not wait_for_lock_waiters(env["folder"], 2, seconds=0.1) \
                    and time.time() < deadline:
                pass
            lock.release()
        reply = answer.result(timeout=30)
        assert disable.result(timeout=60).returncode == 0, disable.result().stderr
    assert run_sql(env["folder"], f"SELECT disabled_at IS NOT NULL FROM accounts WHERE id = '{account}'") == "t"
    assert_nothing_live(env, account, reply)


def test_an_exchange_under_way_when_apple_deletes_the_account_leaves_nothing_live(env):
    """The attack: Apple's account-delete notification unlinks the identity and ends every
    token while an exchange of the same user is between its look-up of the link and its
    tokens. The exchange must not issue a live token to the account afterwards. The test holds
    the account's first family so that the notification waits after its unlink, and the
    exchange starts meanwhile."""
    account, first, _ = linked_account(env)
    again = AppSignIn(env["standin"], sub=first.sub, email=first.email)
    body = env["standin"].notification(BUNDLE_ID, "account-delete", first.sub)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        with held_lock(env["folder"], f"SELECT 1 FROM refresh_token_families WHERE account_id = '{account}' "
                                      f"FOR UPDATE") as lock:
            notice = pool.submit(notify, env, body)
            assert wait_for_lock_waiters(env["folder"], 1), "the notification did not reach the tokens"
            answer = pool.submit(exchange, env, again)
            assert wait_for_lock_waiters(env["folder"], 2), "the exchange did not reach the link"
            lock.release()
        assert notice.result(timeout=30).status_code == 200
        reply = answer.result(timeout=30)
    assert run_sql(env["folder"], f"SELECT count(*) FROM upstream_identities WHERE account_id = '{account}'") == "0"
    assert_nothing_live(env, account, reply)


def test_bad_signature_wrong_audience_and_stale_notifications_do_nothing(env):
    account, sign_in, _ = linked_account(env)
    standin = env["standin"]
    for body, reason in [
        (standin.notification(SERVICES_ID, "consent-revoked", sign_in.sub, kid="AppleKeyA1", key=new_rsa_key()),
         "signature"),
        (standin.notification("com.other.web", "consent-revoked", sign_in.sub), "audience"),
        (standin.notification(SERVICES_ID, "consent-revoked", sign_in.sub, iss="https://evil.example"), "issuer"),
        (standin.notification(SERVICES_ID, "consent-revoked", sign_in.sub, iat=int(time.time()) - 7200), "stale"),
        ({"payload": "not-a-jws"}, "malformed"),
    ]:
        answer = notify(env, body)
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == "invalid_request" and reason in answer.json()["error_description"]
    assert notify(env, {"nothing": 1}).status_code == 400
    assert link_state(env, sign_in) == "t"
    assert notification_events(env, account) == []


def test_replayed_notification_acts_once(env):
    account, sign_in, _ = linked_account(env)
    body = env["standin"].notification(SERVICES_ID, "email-disabled", sign_in.sub, email=sign_in.email,
                                       is_private_email=True)
    assert notify(env, body).json() == {"status": "processed"}
    notify(env, env["standin"].notification(SERVICES_ID, "email-enabled", sign_in.sub))
    again = notify(env, body)
    assert again.status_code == 200 and again.json() == {"status": "replayed"}
    assert link_state(env, sign_in) == "t"
    assert notification_events(env, account) == ["email-disabled:email_undeliverable", "email-enabled:email_deliverable"]


def test_notification_for_an_unknown_user_is_accepted_without_action(env):
    answer = notify(env, env["standin"].notification(SERVICES_ID, "consent-revoked", "000000.unknown.0000"))
    assert answer.status_code == 200 and answer.json() == {"status": "ignored"}


def test_client_secret_of_another_team_is_refused_by_apple():
    with apple_server(other_team_key=True) as other:
        sign_in = AppSignIn(other["standin"])
        answer = exchange(other, sign_in)
        assert answer.status_code == 500, answer.text
        assert answer.json()["error"] == "server_error"
        assert other["standin"].token_requests[-1]["outcome"] == "invalid_client"
        assert run_sql(other["folder"], "SELECT count(*) FROM upstream_identities") == "0"


def test_token_exchange_with_dpop_binds_the_tokens(env):
    from dpop_client import DPoPKey
    key = DPoPKey()
    token_endpoint = env["discovery"]["token_endpoint"]
    sign_in = AppSignIn(env["standin"])
    form = {"grant_type": TOKEN_EXCHANGE, "client_id": APP_CLIENT, "subject_token": sign_in.identity_token,
            "subject_token_type": ID_TOKEN_TYPE, "apple_authorization_code": sign_in.code,
            "apple_nonce": sign_in.raw_nonce, "scope": "openid offline_access"}
    answer = requests.post(token_endpoint, data=form, timeout=20, headers={"DPoP": key.proof("POST", token_endpoint)})
    assert answer.status_code == 200, answer.text
    tokens = answer.json()
    assert tokens["token_type"] == "DPoP"
    assert pyjwt.decode(tokens["access_token"], options={"verify_signature": False})["cnf"] == {"jkt": key.thumbprint}
    # The public client's refresh token needs a proof of the same key.
    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": APP_CLIENT}
    refused(requests.post(token_endpoint, data=refresh, timeout=10,
                          headers={"DPoP": DPoPKey().proof("POST", token_endpoint)}), words="key the grant is bound to")
    again = requests.post(token_endpoint, data=refresh, timeout=10, headers={"DPoP": key.proof("POST", token_endpoint)})
    assert again.status_code == 200, again.text
