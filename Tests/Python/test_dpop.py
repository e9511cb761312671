"""DPoP (RFC 9449) against a real `auth-server serve`, with the DPoP client of
pysupport/dpop_client.py: a P-256 key per device and a freshly signed proof per request. The attacks
come first: each names the attacker's request and the refusal it must get."""

import hashlib
import json
import os
import secrets
import shutil
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

import jwt as pyjwt
import pytest
import requests

from conftest import ROOT, Browser, free_port, hash_secret, serve
from dpop_client import DPoPKey, b64

NATIVE = "dpop-native"
BILLING = "https://api.example.com/billing"
API_SECRET = "billing-api-secret-" + uuid.uuid4().hex
WEB = "dpop-web"
REDIRECT = "http://127.0.0.1/callback"


def start_server(oauth=None):
    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix="auth-server-dpop-")
    os.chmod(data_dir, 0o755)
    secret = "dpop-web-secret-" + uuid.uuid4().hex
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(data_dir) / "var"),
        "public_dir": str(ROOT / "public"), "oauth": oauth or {},
        "clients": [
            {"client_id": NATIVE, "client_name": "DPoP Native", "application_type": "native",
             "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
             "grant_types": ["authorization_code", "refresh_token"], "scope": "openid profile email offline_access",
             "first_party": True},
            {"client_id": WEB, "client_name": "DPoP Web", "application_type": "web",
             "redirect_uris": ["https://web.example/callback"], "token_endpoint_auth_method": "client_secret_basic",
             "client_secret_hash": hash_secret(secret),
             "grant_types": ["authorization_code", "refresh_token", "client_credentials"],
             "scope": "openid profile email offline_access", "first_party": True, "dpop_bound_access_tokens": True},
        ],
        "resources": [{
            "identifier": BILLING, "name": "Billing",
            "scopes": [{"name": "billing:read", "description": "Read your invoices", "description_ja": "請求書の閲覧"}],
            "access_token": {"format": "opaque", "lifetime_seconds": 120}, "allowed_clients": [WEB],
            "introspection": {"client_id": "billing-api", "client_secret_hash": hash_secret(API_SECRET)},
        }],
    }
    return base, secret, data_dir, serve(config, data_dir)


@pytest.fixture(scope="module")
def server():
    base, secret, data_dir, running = start_server({"dpop_required_for_public_clients": True})
    try:
        with running:
            discovery = requests.get(base + "/.well-known/openid-configuration", timeout=10).json()
            yield {"base": base, "secret": secret, "discovery": discovery}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def nonce_server():
    base, secret, data_dir, running = start_server({"dpop_nonce_required": True})
    try:
        with running:
            discovery = requests.get(base + "/.well-known/openid-configuration", timeout=10).json()
            yield {"base": base, "secret": secret, "discovery": discovery}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def signed_in(base):
    browser = Browser(base)
    browser.sign_up()
    return browser


def authorize(server, browser, dpop_jkt=None, client_id=NATIVE, redirect=REDIRECT):
    """The code and verifier of a PKCE code flow of the native app."""
    verifier = secrets.token_urlsafe(48)
    parameters = {
        "client_id": client_id, "redirect_uri": redirect, "response_type": "code",
        "scope": "openid profile offline_access", "state": secrets.token_urlsafe(8), "nonce": secrets.token_urlsafe(8),
        "code_challenge": b64(hashlib.sha256(verifier.encode()).digest()), "code_challenge_method": "S256",
    }
    if dpop_jkt:
        parameters["dpop_jkt"] = dpop_jkt
    callback = browser.authorize(server["discovery"]["authorization_endpoint"] + "?" + urllib.parse.urlencode(parameters))
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(callback).query))
    assert "code" in query, callback
    return query["code"], verifier


def token_request(server, form, proof=None, auth=None, headers=None):
    all_headers = dict(headers or {})
    if proof is not None:
        all_headers["DPoP"] = proof
    return requests.post(server["discovery"]["token_endpoint"], data=form, headers=all_headers, auth=auth, timeout=10)


def redeem(server, code, verifier, key=None, proof=None):
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": NATIVE,
            "code_verifier": verifier}
    if proof is None and key is not None:
        proof = key.proof("POST", server["discovery"]["token_endpoint"])
    return token_request(server, form, proof)


def refresh(server, refresh_token, key=None, proof=None):
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": NATIVE}
    if proof is None and key is not None:
        proof = key.proof("POST", server["discovery"]["token_endpoint"])
    return token_request(server, form, proof)


def bound_tokens(server, key):
    code, verifier = authorize(server, signed_in(server["base"]))
    response = redeem(server, code, verifier, key)
    assert response.status_code == 200, response.text
    return response.json()


def userinfo(server, access_token, key=None, scheme="DPoP", proof=None, nonce=None):
    url = server["discovery"]["userinfo_endpoint"]
    headers = {"Authorization": f"{scheme} {access_token}"}
    if proof is None and key is not None:
        proof = key.proof("GET", url, access_token=access_token, nonce=nonce)
    if proof is not None:
        headers["DPoP"] = proof
    return requests.get(url, headers=headers, timeout=10)


def assert_refused(response, error, status=400):
    assert response.status_code == status, response.text
    assert response.json()["error"] == error, response.text


# MARK: - Attacks at /token


def test_a_public_client_without_a_proof_is_refused_when_dpop_is_required(server):
    code, verifier = authorize(server, signed_in(server["base"]))
    assert_refused(redeem(server, code, verifier), "invalid_dpop_proof")


@pytest.mark.parametrize("htm, htu_path", [("GET", "/token"), ("POST", "/userinfo"), ("POST", "/token/extra")])
def test_a_proof_for_another_method_or_uri_is_refused(server, htm, htu_path):
    code, verifier = authorize(server, signed_in(server["base"]))
    key = DPoPKey()
    proof = key.proof(htm, server["base"] + htu_path)
    assert_refused(redeem(server, code, verifier, proof=proof), "invalid_dpop_proof")
    # The code was not touched: the same request with a right proof succeeds.
    assert redeem(server, code, verifier, key).status_code == 200


@pytest.mark.parametrize("age", [120, -60])
def test_a_stale_or_future_proof_is_refused(server, age):
    code, verifier = authorize(server, signed_in(server["base"]))
    key = DPoPKey()
    proof = key.proof("POST", server["discovery"]["token_endpoint"], iat=int(time.time()) - age)
    assert_refused(redeem(server, code, verifier, proof=proof), "invalid_dpop_proof")


def test_a_replayed_proof_is_refused(server):
    key = DPoPKey()
    tokens = bound_tokens(server, key)
    proof = key.proof("POST", server["discovery"]["token_endpoint"])
    rotated = refresh(server, tokens["refresh_token"], proof=proof)
    assert rotated.status_code == 200, rotated.text
    # The attacker captured the request with its proof and replays the proof with the new token.
    assert_refused(refresh(server, rotated.json()["refresh_token"], proof=proof), "invalid_dpop_proof")
    # Nothing was revoked: the app's next refresh works.
    assert refresh(server, rotated.json()["refresh_token"], key).status_code == 200


@pytest.mark.parametrize("header", [
    {"typ": "JWT"}, {"alg": "none"}, {"alg": "HS256"},
])
def test_malformed_proof_headers_are_refused(server, header):
    code, verifier = authorize(server, signed_in(server["base"]))
    proof = DPoPKey().proof("POST", server["discovery"]["token_endpoint"], header=header)
    assert_refused(redeem(server, code, verifier, proof=proof), "invalid_dpop_proof")


def test_a_proof_carrying_its_private_key_is_refused(server):
    code, verifier = authorize(server, signed_in(server["base"]))
    key = DPoPKey()
    private = key.jwk | {"d": b64(key.private.private_numbers().private_value.to_bytes(32, "big"))}
    proof = key.proof("POST", server["discovery"]["token_endpoint"], header={"jwk": private})
    assert_refused(redeem(server, code, verifier, proof=proof), "invalid_dpop_proof")


def test_two_dpop_headers_are_refused(server):
    code, verifier = authorize(server, signed_in(server["base"]))
    key = DPoPKey()
    url = server["discovery"]["token_endpoint"]
    # requests cannot send a header twice; http.client can.
    import http.client
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    body = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                   "client_id": NATIVE, "code_verifier": verifier})
    connection.putrequest("POST", parsed.path)
    connection.putheader("Content-Type", "application/x-www-form-urlencoded")
    connection.putheader("Content-Length", str(len(body)))
    connection.putheader("DPoP", key.proof("POST", url))
    connection.putheader("DPoP", key.proof("POST", url))
    connection.endheaders(body.encode())
    response = connection.getresponse()
    assert response.status == 400
    assert json.loads(response.read())["error"] == "invalid_dpop_proof"


def test_a_stolen_refresh_token_is_useless_without_the_key_and_revokes_nothing(server):
    key = DPoPKey()
    tokens = bound_tokens(server, key)
    stolen = tokens["refresh_token"]
    # Without a proof: the server requires one of every public client.
    assert_refused(refresh(server, stolen), "invalid_dpop_proof")
    # With the attacker's own key.
    assert_refused(refresh(server, stolen, DPoPKey()), "invalid_grant")
    # The family is intact: the app refreshes with its key, and the new token is bound too.
    rotated = refresh(server, stolen, key)
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["token_type"] == "DPoP"
    assert_refused(refresh(server, rotated.json()["refresh_token"], DPoPKey()), "invalid_grant")
    assert refresh(server, rotated.json()["refresh_token"], key).status_code == 200


def test_a_code_bound_with_dpop_jkt_is_refused_with_another_key(server):
    key = DPoPKey()
    browser = signed_in(server["base"])
    code, verifier = authorize(server, browser, dpop_jkt=key.thumbprint)
    # The attacker intercepted the code and redeems it with its own key: refused, code burnt.
    assert_refused(redeem(server, code, verifier, DPoPKey()), "invalid_grant")
    assert_refused(redeem(server, code, verifier, key), "invalid_grant")
    # A bound code redeemed by the key it names works.
    code, verifier = authorize(server, browser, dpop_jkt=key.thumbprint)
    response = redeem(server, code, verifier, key)
    assert response.status_code == 200, response.text
    assert pyjwt.decode(response.json()["access_token"], options={"verify_signature": False})["cnf"] == {
        "jkt": key.thumbprint}


def test_a_malformed_dpop_jkt_is_refused_at_authorize(server):
    browser = signed_in(server["base"])
    with pytest.raises(AssertionError) as refused:
        authorize(server, browser, dpop_jkt="not-a-thumbprint")
    assert "invalid_request" in str(refused.value)


# MARK: - Attacks at /userinfo


def test_a_bound_access_token_presented_as_bearer_is_refused(server):
    key = DPoPKey()
    tokens = bound_tokens(server, key)
    response = userinfo(server, tokens["access_token"], scheme="Bearer")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("DPoP ")
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_userinfo_refuses_a_wrong_ath_another_key_a_replay_and_a_missing_proof(server):
    key = DPoPKey()
    tokens = bound_tokens(server, key)
    url = server["discovery"]["userinfo_endpoint"]
    token = tokens["access_token"]
    cases = [
        key.proof("GET", url, access_token=token + "x"),  # ath of another token
        key.proof("GET", url),  # no ath at all
        DPoPKey().proof("GET", url, access_token=token),  # the attacker's key
        key.proof("POST", url, access_token=token),  # another method
    ]
    for proof in cases:
        response = userinfo(server, token, proof=proof)
        assert response.status_code == 401, response.text
        challenge = response.headers["WWW-Authenticate"]
        assert challenge.startswith("DPoP ") and 'error="invalid_dpop_proof"' in challenge, challenge
        assert 'algs="ES256 EdDSA RS256 PS256"' in challenge
    # A second copy of the token in the query is ambiguous: refused before anything else.
    twice = requests.get(url + "?access_token=x", timeout=10,
                         headers={"Authorization": f"DPoP {token}", "DPoP": key.proof("GET", url, access_token=token)})
    assert twice.status_code == 400
    assert twice.json()["error"] == "invalid_request"
    missing = requests.get(url, headers={"Authorization": f"DPoP {token}"}, timeout=10)
    assert missing.status_code == 401
    assert 'error="invalid_dpop_proof"' in missing.headers["WWW-Authenticate"]
    # The right proof works once; its replay is refused.
    proof = key.proof("GET", url, access_token=token)
    assert userinfo(server, token, proof=proof).status_code == 200
    replay = userinfo(server, token, proof=proof)
    assert replay.status_code == 401
    assert 'error="invalid_dpop_proof"' in replay.headers["WWW-Authenticate"]


# MARK: - What a DPoP client gets


def test_discovery_lists_the_proof_algorithms(server):
    assert server["discovery"]["dpop_signing_alg_values_supported"] == ["ES256", "EdDSA", "RS256", "PS256"]


def test_bound_tokens_carry_the_key_and_work_at_userinfo(server):
    key = DPoPKey()
    tokens = bound_tokens(server, key)
    assert tokens["token_type"] == "DPoP"
    claims = pyjwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["cnf"] == {"jkt": key.thumbprint}
    response = userinfo(server, tokens["access_token"], key)
    assert response.status_code == 200, response.text
    assert "sub" in response.json()


def test_confidential_client_with_dpop_bound_access_tokens(server):
    auth = (WEB, server["secret"])
    url = server["discovery"]["token_endpoint"]
    # Without a proof: refused (RFC 9449 §5.2).
    assert_refused(token_request(server, {"grant_type": "client_credentials"}, auth=auth), "invalid_dpop_proof")
    key = DPoPKey()
    response = token_request(server, {"grant_type": "client_credentials"}, key.proof("POST", url), auth=auth)
    assert response.status_code == 200, response.text
    token = response.json()
    assert token["token_type"] == "DPoP"
    # Introspection tells the resource server the binding (RFC 9449 §6.2), with a proof sent along.
    introspect = server["discovery"]["introspection_endpoint"]
    answer = requests.post(introspect, data={"token": token["access_token"]}, auth=auth,
                           headers={"DPoP": key.proof("POST", introspect)}, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.json()["active"] is True
    assert answer.json()["token_type"] == "DPoP"
    assert answer.json()["cnf"] == {"jkt": key.thumbprint}
    # A proof for another endpoint is refused at introspection too.
    wrong = requests.post(introspect, data={"token": token["access_token"]}, auth=auth,
                          headers={"DPoP": key.proof("POST", url)}, timeout=10)
    assert_refused(wrong, "invalid_dpop_proof")


def test_opaque_tokens_keep_the_binding_in_their_record(server):
    key = DPoPKey()
    url = server["discovery"]["token_endpoint"]
    response = token_request(server, {"grant_type": "client_credentials", "resource": BILLING},
                             key.proof("POST", url), auth=(WEB, server["secret"]))
    assert response.status_code == 200, response.text
    token = response.json()
    assert token["token_type"] == "DPoP"
    assert token["access_token"].count(".") == 0  # opaque
    # The API introspects it with its own credentials and learns the key to check (RFC 9449 §6.2).
    answer = requests.post(server["discovery"]["introspection_endpoint"], data={"token": token["access_token"]},
                           auth=("billing-api", API_SECRET), timeout=10).json()
    assert answer["active"] is True
    assert answer["token_type"] == "DPoP"
    assert answer["cnf"] == {"jkt": key.thumbprint}


def test_revoking_a_bound_refresh_token_needs_the_client_not_the_key(server):
    key = DPoPKey()
    tokens = bound_tokens(server, key)
    revoke = server["discovery"]["revocation_endpoint"]
    response = requests.post(revoke, data={"token": tokens["refresh_token"], "client_id": NATIVE}, timeout=10)
    assert response.status_code == 200
    assert_refused(refresh(server, tokens["refresh_token"], key), "invalid_grant")


# MARK: - Nonces


def test_nonce_required_then_satisfied(nonce_server):
    server = nonce_server
    key = DPoPKey()
    code, verifier = authorize(server, signed_in(server["base"]))
    url = server["discovery"]["token_endpoint"]
    first = redeem(server, code, verifier, key)
    assert_refused(first, "use_dpop_nonce")
    nonce = first.headers["DPoP-Nonce"]
    # A made-up nonce is refused the same way.
    assert_refused(redeem(server, code, verifier, proof=key.proof("POST", url, nonce="made-up")), "use_dpop_nonce")
    response = redeem(server, code, verifier, proof=key.proof("POST", url, nonce=nonce))
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"] == "DPoP"
    # The resource endpoint asks for the nonce with a 401 challenge (RFC 9449 §9).
    challenge = userinfo(server, tokens["access_token"], key)
    assert challenge.status_code == 401
    assert 'error="use_dpop_nonce"' in challenge.headers["WWW-Authenticate"]
    assert challenge.headers["DPoP-Nonce"] == nonce
    assert userinfo(server, tokens["access_token"], key, nonce=nonce).status_code == 200
    # DPoP stays optional for this server's public clients: no proof, a Bearer token.
    code, verifier = authorize(server, signed_in(server["base"]))
    bearer = redeem(server, code, verifier)
    assert bearer.status_code == 200, bearer.text
    assert bearer.json()["token_type"] == "Bearer"
    assert "cnf" not in pyjwt.decode(bearer.json()["access_token"], options={"verify_signature": False})
