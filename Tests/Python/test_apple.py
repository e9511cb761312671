"""Sign in with Apple from a native app (RFC 8693 token exchange at /token) and Apple's
server-to-server notifications, against the Apple stand-in (Tests/pysupport/apple_standin.py)
and a real `auth-server serve`."""

import json
import sys
import tempfile
import shutil
from pathlib import Path

import jwt as pyjwt
import pytest
import requests

from auth_server import ROOT  # noqa: E402  (conftest puts Tests/pysupport on the path)

sys.path.insert(0, str(ROOT / "Tests" / "Conformance"))
from conformance.tls import make_certificates  # noqa: E402
from apple_standin import APPLE_ISSUER, AppleStandIn  # noqa: E402

BUNDLE_ID = "com.example.notes"


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
