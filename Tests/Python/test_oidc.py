"""The provider driven by OIDC client libraries we did not write: authlib for the protocol,
PyJWT as a second, independent ID token validator."""

import secrets
import time
import urllib.parse
import warnings

import jwt as pyjwt
import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
with warnings.catch_warnings():
    # authlib.jose still works; its successor (joserfc) is a separate package.
    warnings.simplefilter("ignore")
    from authlib.jose import JsonWebKey
    from authlib.jose import jwt as authlib_jwt
    from authlib.oidc.core import CodeIDToken

from conftest import ALGORITHM_CLIENTS, NATIVE_CLIENT, WEB_CLIENT


def web_client(server, discovery, scope="openid profile email offline_access"):
    return OAuth2Session(
        WEB_CLIENT, server["secret"], scope=scope, redirect_uri=server["redirect_uri"],
        code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic",
    )


def code_flow(server, discovery, browser, scope="openid profile email offline_access"):
    client = web_client(server, discovery, scope)
    verifier = secrets.token_urlsafe(48)
    nonce = secrets.token_urlsafe(16)
    url, state = client.create_authorization_url(discovery["authorization_endpoint"], nonce=nonce, code_verifier=verifier)
    callback = browser.authorize(url)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(callback).query))
    assert query["state"] == state
    assert query["iss"] == discovery["issuer"]
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    return client, token, nonce, query["code"], verifier


def jwks(discovery):
    return requests.get(discovery["jwks_uri"], timeout=10).json()


@pytest.mark.parametrize("client_id,algorithm", ALGORITHM_CLIENTS.items())
def test_id_tokens_in_every_documented_algorithm_verify_with_pyjwt(server, discovery, browser, client_id, algorithm):
    # No key was created by hand: the server made one at start-up for the client's algorithm.
    assert algorithm in discovery["id_token_signing_alg_values_supported"]
    client = OAuth2Session(client_id, server["secret"], scope="openid", redirect_uri=server["redirect_uri"],
                           code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic")
    verifier = secrets.token_urlsafe(48)
    url, _ = client.create_authorization_url(discovery["authorization_endpoint"], nonce="n-" + algorithm,
                                             code_verifier=verifier)
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=browser.authorize(url),
                               code_verifier=verifier)
    assert pyjwt.get_unverified_header(token["id_token"])["alg"] == algorithm
    key = pyjwt.PyJWKClient(discovery["jwks_uri"]).get_signing_key_from_jwt(token["id_token"])
    claims = pyjwt.decode(token["id_token"], key.key, algorithms=[algorithm], audience=client_id,
                          issuer=discovery["issuer"])
    assert claims["nonce"] == "n-" + algorithm


def test_discovery_is_consistent(server, discovery):
    assert discovery["issuer"] == server["base"]
    for key in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "revocation_endpoint",
                "introspection_endpoint", "end_session_endpoint"):
        assert discovery[key].startswith(server["base"] + "/")
    assert discovery["code_challenge_methods_supported"] == ["S256"]
    assert discovery["response_types_supported"] == ["code"]
    assert discovery["request_parameter_supported"] is True  # signed request objects (RFC 9101)
    assert discovery["request_uri_parameter_supported"] is False
    assert discovery["backchannel_logout_supported"] is True
    assert discovery["backchannel_logout_session_supported"] is True
    response = requests.get(discovery["jwks_uri"], timeout=10)
    assert "max-age" in response.headers["Cache-Control"]
    assert all("d" not in key for key in response.json()["keys"])


def test_code_flow_with_pkce_state_and_nonce_validated_by_authlib_and_pyjwt(server, discovery, browser):
    client, token, nonce, _, _ = code_flow(server, discovery, browser)
    assert token["token_type"] == "Bearer"
    assert "refresh_token" in token

    # authlib: signature against the JWKS, iss, aud, exp, iat, nonce and at_hash.
    claims = authlib_jwt.decode(
        token["id_token"], JsonWebKey.import_key_set(jwks(discovery)), claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": discovery["issuer"]}},
        claims_params={"nonce": nonce, "client_id": WEB_CLIENT, "access_token": token["access_token"]},
    )
    claims.validate(leeway=5)
    assert claims["auth_time"] <= time.time() + 5
    assert claims["amr"] == ["pwd"]
    assert claims["sid"]

    # PyJWT, independently.
    key = pyjwt.PyJWKClient(discovery["jwks_uri"]).get_signing_key_from_jwt(token["id_token"])
    decoded = pyjwt.decode(token["id_token"], key.key, algorithms=["RS256"], audience=WEB_CLIENT,
                           issuer=discovery["issuer"], options={"require": ["exp", "iat", "sub", "auth_time"]})
    assert decoded["nonce"] == nonce
    assert decoded["sub"] == claims["sub"]
    assert pyjwt.get_unverified_header(token["access_token"])["typ"] == "at+jwt"

    # userinfo, GET and POST.
    info = client.get(discovery["userinfo_endpoint"]).json()
    assert info["sub"] == claims["sub"]
    assert info["email"] == browser.email
    assert info["name"] == "Py Thon"
    posted = client.post(discovery["userinfo_endpoint"]).json()
    assert posted["sub"] == claims["sub"]


def test_refresh_rotation_and_reuse_detection(server, discovery, browser):
    client, token, _, _, _ = code_flow(server, discovery, browser)
    first = token["refresh_token"]
    rotated = client.refresh_token(discovery["token_endpoint"], refresh_token=first)
    assert rotated["refresh_token"] != first
    # auth_time survives the refresh.
    before = pyjwt.decode(token["id_token"], options={"verify_signature": False})
    after = pyjwt.decode(rotated["id_token"], options={"verify_signature": False})
    assert after["auth_time"] == before["auth_time"]
    # Using the rotated-away token again revokes the family, including the newest token.
    with pytest.raises(Exception) as reuse:
        client.refresh_token(discovery["token_endpoint"], refresh_token=first)
    assert "invalid_grant" in str(reuse.value)
    with pytest.raises(Exception) as family:
        client.refresh_token(discovery["token_endpoint"], refresh_token=rotated["refresh_token"])
    assert "invalid_grant" in str(family.value)


def test_code_replay_is_refused_and_revokes_the_tokens(server, discovery, browser):
    client, token, _, code, verifier = code_flow(server, discovery, browser)
    replay = requests.post(discovery["token_endpoint"], data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": server["redirect_uri"], "code_verifier": verifier,
    }, auth=(WEB_CLIENT, server["secret"]), timeout=10)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert replay.headers["Cache-Control"] == "no-store"
    userinfo = requests.get(discovery["userinfo_endpoint"], headers={"Authorization": f"Bearer {token['access_token']}"},
                            timeout=10)
    assert userinfo.status_code == 401
    assert 'error="invalid_token"' in userinfo.headers["WWW-Authenticate"]


def test_revocation_and_introspection(server, discovery, browser):
    client, token, _, _, _ = code_flow(server, discovery, browser)
    active = client.introspect_token(discovery["introspection_endpoint"], token=token["access_token"]).json()
    assert active["active"] is True
    assert active["client_id"] == WEB_CLIENT
    refresh = client.introspect_token(discovery["introspection_endpoint"], token=token["refresh_token"],
                                      token_type_hint="refresh_token").json()
    assert refresh == refresh | {"active": True, "token_type": "refresh_token"}

    assert client.revoke_token(discovery["revocation_endpoint"], token=token["access_token"]).status_code == 200
    assert client.introspect_token(discovery["introspection_endpoint"], token=token["access_token"]).json() == {"active": False}
    assert client.revoke_token(discovery["revocation_endpoint"], token=token["refresh_token"],
                               token_type_hint="refresh_token").status_code == 200
    assert client.introspect_token(discovery["introspection_endpoint"], token=token["refresh_token"]).json() == {"active": False}

    # Unauthenticated or public clients may not introspect.
    anonymous = requests.post(discovery["introspection_endpoint"], data={"token": token["access_token"], "client_id": NATIVE_CLIENT},
                              timeout=10)
    assert anonymous.status_code == 401
    wrong = requests.post(discovery["introspection_endpoint"], data={"token": "x"}, auth=(WEB_CLIENT, "wrong"), timeout=10)
    assert wrong.status_code == 401
    assert wrong.headers["WWW-Authenticate"].startswith("Basic")


def test_client_credentials(server, discovery):
    client = OAuth2Session(WEB_CLIENT, server["secret"], token_endpoint_auth_method="client_secret_post")
    with pytest.raises(Exception) as refused:
        # The client is registered for client_secret_basic only.
        client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials")
    assert "invalid_client" in str(refused.value)
    client = OAuth2Session(WEB_CLIENT, server["secret"])
    token = client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials")
    assert "refresh_token" not in token and "id_token" not in token
    claims = pyjwt.decode(token["access_token"], options={"verify_signature": False})
    assert claims["sub"] == WEB_CLIENT and claims["client_id"] == WEB_CLIENT


def test_public_native_client_with_loopback_redirect(server, discovery, browser):
    redirect = "http://127.0.0.1:49152/callback"  # any port on the loopback literal (RFC 8252 §7.3)
    client = OAuth2Session(NATIVE_CLIENT, scope="openid offline_access", redirect_uri=redirect,
                           code_challenge_method="S256", token_endpoint_auth_method="none")
    verifier = secrets.token_urlsafe(48)
    url, state = client.create_authorization_url(discovery["authorization_endpoint"], nonce="n1", code_verifier=verifier)
    callback = browser.authorize(url)
    assert callback.startswith(redirect + "?")
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    assert "refresh_token" in token
    # A wrong verifier fails.
    url, _ = client.create_authorization_url(discovery["authorization_endpoint"], nonce="n2", code_verifier=verifier)
    callback = browser.authorize(url)
    with pytest.raises(Exception) as mismatch:
        client.fetch_token(discovery["token_endpoint"], authorization_response=callback, code_verifier=secrets.token_urlsafe(48))
    assert "invalid_grant" in str(mismatch.value)


def test_prompt_none_without_session(server, discovery):
    client = web_client(server, discovery)
    url, state = client.create_authorization_url(discovery["authorization_endpoint"], nonce="n", prompt="none",
                                                 code_verifier=secrets.token_urlsafe(48))
    response = requests.get(url, allow_redirects=False, timeout=10)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(response.headers["Location"]).query))
    assert query["error"] == "login_required"
    assert query["state"] == state


def test_rp_initiated_logout_with_back_channel_delivery(server, discovery, browser, receiver):
    _, token, _, _, _ = code_flow(server, discovery, browser)
    id_claims = pyjwt.decode(token["id_token"], options={"verify_signature": False})
    seen = len(receiver.bodies)
    state = "s&t=1 2"
    response = browser.session.get(discovery["end_session_endpoint"], params={
        "id_token_hint": token["id_token"], "post_logout_redirect_uri": server["post_logout_uri"], "state": state,
    }, allow_redirects=False, timeout=10)
    assert response.status_code == 303
    location = urllib.parse.urlparse(response.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == server["post_logout_uri"]
    assert dict(urllib.parse.parse_qsl(location.query))["state"] == state
    assert browser.session.get(server["base"] + "/api/account", timeout=10).status_code == 401

    # The receiver refuses the first delivery; the worker retries.
    deliveries = receiver.wait_for(seen + 2)
    assert len(deliveries) >= seen + 2
    last = deliveries[-1]
    assert last["content_type"] == "application/x-www-form-urlencoded"
    logout_token = dict(urllib.parse.parse_qsl(last["body"]))["logout_token"]
    assert pyjwt.get_unverified_header(logout_token)["typ"] == "logout+jwt"
    key = pyjwt.PyJWKClient(discovery["jwks_uri"]).get_signing_key_from_jwt(logout_token)
    claims = pyjwt.decode(logout_token, key.key, algorithms=["RS256"], audience=WEB_CLIENT, issuer=discovery["issuer"])
    assert claims["sub"] == id_claims["sub"]
    assert claims["sid"] == id_claims["sid"]
    assert "http://schemas.openid.net/event/backchannel-logout" in claims["events"]
    assert "nonce" not in claims
    assert claims["jti"]
