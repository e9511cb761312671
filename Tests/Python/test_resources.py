"""APIs (resource servers) as configured resources, driven by authlib and PyJWT against a real
`auth-server serve`: resource indicators (RFC 8707) in the code flow, client_credentials and
refresh narrowing; API scopes; role claims in RFC 9068 access tokens; opaque tokens; and
introspection by a resource server with its own credentials (RFC 7662 §2.1), with the refusals."""

import json
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

import jwt as pyjwt
import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session

from conftest import Browser, hash_secret
from auth_server import ROOT, binary, free_port, serve

ORDERS = "https://api.example.com/orders"
BILLING = "urn:example:billing"
CLIENT = "res-web"
OTHER = "res-other"


@pytest.fixture(scope="module")
def env():
    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix="auth-server-resources-")
    Path(data_dir).chmod(0o755)  # the embedded cluster may run as the postgres user
    secret = "res-secret-" + uuid.uuid4().hex + uuid.uuid4().hex
    api_secrets = {"orders-api": "orders-" + uuid.uuid4().hex, "billing-api": "billing-" + uuid.uuid4().hex}
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    client = {
        "client_name": "Resources Web", "application_type": "web", "redirect_uris": [redirect],
        "token_endpoint_auth_method": "client_secret_basic", "client_secret_hash": hash_secret(secret),
        "grant_types": ["authorization_code", "refresh_token", "client_credentials"],
        "scope": "openid profile email offline_access",
    }
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(data_dir) / "var"),
        "public_dir": str(ROOT / "public"),
        "clients": [client | {"client_id": CLIENT}, client | {"client_id": OTHER}],
        "resources": [
            {
                "identifier": ORDERS, "name": "Orders",
                "scopes": [
                    {"name": "orders:read", "description": "Read your orders", "description_ja": "注文の閲覧"},
                    {"name": "orders:write", "description": "Place orders", "description_ja": "注文の作成"},
                ],
                "access_token": {"format": "jwt", "lifetime_seconds": 300},
                "allowed_clients": [CLIENT],
                "token_claims": ["roles", "groups"],
                "introspection": {"client_id": "orders-api", "client_secret_hash": hash_secret(api_secrets["orders-api"])},
            },
            {
                "identifier": BILLING, "name": "Billing",
                "scopes": [{"name": "billing:read", "description": "Read your invoices", "description_ja": "請求書の閲覧"}],
                "access_token": {"format": "opaque", "lifetime_seconds": 120},
                "allowed_clients": [CLIENT, OTHER],
                "introspection": {"client_id": "billing-api", "client_secret_hash": hash_secret(api_secrets["billing-api"])},
            },
        ],
    }
    try:
        with serve(config, data_dir):
            discovery = requests.get(base + "/.well-known/openid-configuration", timeout=10).json()
            yield {"base": base, "secret": secret, "redirect": redirect, "discovery": discovery,
                   "api_secrets": api_secrets, "config": Path(data_dir) / "config.json"}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def assign(env, email, kind, name):
    """Gives the account a role or group with the operator's command, as an admin would."""
    subprocess.run([binary(), "users", kind + "s", "add", "--config", str(env["config"]), email, name],
                   check=True, capture_output=True)


def session(env, client_id=CLIENT, scope="openid orders:read"):
    return OAuth2Session(client_id, env["secret"], scope=scope, redirect_uri=env["redirect"],
                         code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic")


def authorize(env, browser, scope, resources=(), client_id=CLIENT):
    """The code flow up to the callback: (client, callback URL, verifier)."""
    client = session(env, client_id, scope)
    verifier = secrets.token_urlsafe(48)
    url, _ = client.create_authorization_url(env["discovery"]["authorization_endpoint"], nonce="n",
                                             code_verifier=verifier)
    for resource in resources:
        url += "&resource=" + urllib.parse.quote(resource, safe="")
    return client, browser.authorize(url), verifier


def query(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlparse(url).query))


def verify(env, token, audience):
    """What an API does with a JWT access token (docs/apis.md)."""
    assert pyjwt.get_unverified_header(token)["typ"] == "at+jwt"
    key = pyjwt.PyJWKClient(env["discovery"]["jwks_uri"]).get_signing_key_from_jwt(token)
    return pyjwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=env["discovery"]["issuer"])


def introspect(env, api, token):
    return requests.post(env["discovery"]["introspection_endpoint"], data={"token": token},
                         auth=(api, env["api_secrets"][api]), timeout=10)


@pytest.fixture
def browser(env):
    browser = Browser(env["base"])
    browser.sign_up()
    return browser


def test_code_flow_token_for_an_api_with_its_scopes_and_role_claims(env, browser):
    assign(env, browser.email, "role", "orders-admin")
    assign(env, browser.email, "group", "staff")
    client, callback, verifier = authorize(env, browser, "openid profile orders:read offline_access")
    token = client.fetch_token(env["discovery"]["token_endpoint"], authorization_response=callback,
                               code_verifier=verifier)
    claims = verify(env, token["access_token"], ORDERS)
    assert claims["aud"] == ORDERS
    assert claims["scope"] == "orders:read"
    assert claims["client_id"] == CLIENT
    assert claims["roles"] == ["orders-admin"] and claims["groups"] == ["staff"]
    assert claims["exp"] - claims["iat"] == 300
    assert token["scope"] == "orders:read" and token["expires_in"] == 300
    # ID tokens are unaffected: the client is their audience.
    assert pyjwt.decode(token["id_token"], options={"verify_signature": False})["aud"] == CLIENT
    # An API's token is not a token for userinfo.
    userinfo = requests.get(env["discovery"]["userinfo_endpoint"],
                            headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=10)
    assert userinfo.status_code == 401


def test_resource_indicators_and_refresh_narrowing_to_one_api(env, browser):
    client, callback, verifier = authorize(env, browser, "openid orders:read billing:read offline_access",
                                           resources=[ORDERS, BILLING])
    # Two APIs in the grant: /token names the one this token is for (RFC 8707 §2.2).
    token = client.fetch_token(env["discovery"]["token_endpoint"], authorization_response=callback,
                               code_verifier=verifier, resource=ORDERS)
    assert verify(env, token["access_token"], ORDERS)["scope"] == "orders:read"

    # Refresh narrows to the other API: an opaque token, introspected by that API.
    billing = client.refresh_token(env["discovery"]["token_endpoint"], refresh_token=token["refresh_token"],
                                   resource=BILLING)
    assert billing["access_token"].count(".") == 0 and billing["scope"] == "billing:read"
    assert billing["expires_in"] == 120
    answer = introspect(env, "billing-api", billing["access_token"]).json()
    assert answer["active"] is True and answer["aud"] == BILLING and answer["scope"] == "billing:read"
    assert answer["client_id"] == CLIENT and answer["token_type"] == "Bearer"
    # The orders API may not look at the billing API's token, nor the other way round.
    assert introspect(env, "orders-api", billing["access_token"]).json() == {"active": False}
    assert introspect(env, "billing-api", token["access_token"]).json() == {"active": False}

    # Without `resource`, a grant of two APIs gives a token for this server's own endpoints.
    own = client.refresh_token(env["discovery"]["token_endpoint"], refresh_token=billing["refresh_token"])
    assert verify(env, own["access_token"], env["discovery"]["issuer"])["scope"] == "openid offline_access"

    # A resource outside the grant: invalid_target, and the refresh token is not burnt.
    refused = requests.post(env["discovery"]["token_endpoint"], auth=(CLIENT, env["secret"]), timeout=10,
                            data={"grant_type": "refresh_token", "refresh_token": own["refresh_token"],
                                  "resource": "https://api.example.com/unknown"})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_target"
    again = client.refresh_token(env["discovery"]["token_endpoint"], refresh_token=own["refresh_token"],
                                 resource=ORDERS)
    assert verify(env, again["access_token"], ORDERS)["aud"] == ORDERS

    # The client revokes the opaque token; its API then sees it inactive.
    assert client.revoke_token(env["discovery"]["revocation_endpoint"], token=billing["access_token"]).status_code == 200
    assert introspect(env, "billing-api", billing["access_token"]).json() == {"active": False}


def test_unknown_resource_is_invalid_target_at_authorize(env, browser):
    _, callback, _ = authorize(env, browser, "openid", resources=["https://evil.example.com/api"])
    assert query(callback)["error"] == "invalid_target"
    _, callback, _ = authorize(env, browser, "openid", resources=["https://api.example.com/orders#frag"])
    assert query(callback)["error"] == "invalid_target"


def test_api_scope_not_allowed_for_the_client_is_invalid_scope(env, browser):
    _, callback, _ = authorize(env, browser, "openid orders:read", client_id=OTHER)
    assert query(callback)["error"] == "invalid_scope"
    response = requests.post(env["discovery"]["token_endpoint"], auth=(OTHER, env["secret"]), timeout=10,
                             data={"grant_type": "client_credentials", "scope": "orders:write"})
    assert response.status_code == 400 and response.json()["error"] == "invalid_scope"


def test_client_credentials_for_an_api(env):
    client = OAuth2Session(CLIENT, env["secret"])
    token = client.fetch_token(env["discovery"]["token_endpoint"], grant_type="client_credentials",
                               scope="orders:write", resource=ORDERS)
    claims = verify(env, token["access_token"], ORDERS)
    assert claims["sub"] == CLIENT and claims["scope"] == "orders:write"
    # The API scope alone names its API.
    implicit = client.fetch_token(env["discovery"]["token_endpoint"], grant_type="client_credentials",
                                  scope="orders:read")
    assert verify(env, implicit["access_token"], ORDERS)["scope"] == "orders:read"
    answer = introspect(env, "orders-api", token["access_token"]).json()
    assert answer["active"] is True and answer["sub"] == CLIENT and answer["aud"] == ORDERS
    # Unknown resource: invalid_target.
    response = requests.post(env["discovery"]["token_endpoint"], auth=(CLIENT, env["secret"]), timeout=10,
                             data={"grant_type": "client_credentials", "resource": "https://evil.example.com/"})
    assert response.status_code == 400 and response.json()["error"] == "invalid_target"


def test_introspection_by_a_resource_server(env, browser):
    assign(env, browser.email, "role", "reader")
    client, callback, verifier = authorize(env, browser, "openid orders:read offline_access")
    token = client.fetch_token(env["discovery"]["token_endpoint"], authorization_response=callback,
                               code_verifier=verifier)
    # Its own API's token, issued to another client: active, with the role claims.
    answer = introspect(env, "orders-api", token["access_token"]).json()
    assert answer["active"] is True
    assert answer["aud"] == ORDERS and answer["scope"] == "orders:read" and answer["client_id"] == CLIENT
    assert answer["roles"] == ["reader"] and answer["iss"] == env["discovery"]["issuer"]
    assert {"sub", "exp", "iat", "jti", "token_type"} <= answer.keys()
    # The same with the credentials in the form (client_secret_post).
    posted = requests.post(env["discovery"]["introspection_endpoint"], timeout=10,
                           data={"token": token["access_token"], "client_id": "orders-api",
                                 "client_secret": env["api_secrets"]["orders-api"]}).json()
    assert posted["active"] is True

    # Attacks: another API's token, a refresh token, a wrong secret.
    assert introspect(env, "billing-api", token["access_token"]).json() == {"active": False}
    assert introspect(env, "orders-api", token["refresh_token"]).json() == {"active": False}
    wrong = requests.post(env["discovery"]["introspection_endpoint"], data={"token": token["access_token"]},
                          auth=("orders-api", "wrong"), timeout=10)
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    # A token for this server's own endpoints (no resource) is no API's.
    own, callback, verifier = authorize(env, browser, "openid")
    plain = own.fetch_token(env["discovery"]["token_endpoint"], authorization_response=callback,
                            code_verifier=verifier)
    assert introspect(env, "orders-api", plain["access_token"]).json() == {"active": False}

    # Revoked by the client: inactive for the API too.
    client.revoke_token(env["discovery"]["revocation_endpoint"], token=token["access_token"])
    assert introspect(env, "orders-api", token["access_token"]).json() == {"active": False}


def documented_example(env):
    """The Python block of docs/apis.md, run as an API of this test's server would run it."""
    text = (ROOT / "docs" / "apis.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'ISSUER = "https://id.example.com"' in code and 'AUDIENCE = "https://api.example.com/orders"' in code
    namespace = {}
    exec(code.replace('"https://id.example.com"', repr(env["discovery"]["issuer"])), namespace)  # noqa: S102
    return namespace


def test_the_documented_python_example_validates_and_refuses(env, browser):
    example = documented_example(env)
    client, callback, verifier = authorize(env, browser, "openid orders:read offline_access")
    token = client.fetch_token(env["discovery"]["token_endpoint"], authorization_response=callback,
                               code_verifier=verifier)
    claims = example["authorize"](token["access_token"], "orders:read")
    assert claims["aud"] == ORDERS and claims["client_id"] == CLIENT
    with pytest.raises(PermissionError, match="insufficient_scope"):
        example["authorize"](token["access_token"], "orders:write")
    # An ID token and a token for /userinfo are refused.
    with pytest.raises(PermissionError, match="invalid_token"):
        example["authorize"](token["id_token"], "orders:read")
    own = client.refresh_token(env["discovery"]["token_endpoint"], refresh_token=token["refresh_token"],
                               resource=ORDERS)
    assert example["authorize"](own["access_token"], "orders:read")["sub"] == claims["sub"]

    # Introspection, as the API, of an opaque token of another API (refused) and of its own.
    billing = OAuth2Session(CLIENT, env["secret"]).fetch_token(
        env["discovery"]["token_endpoint"], grant_type="client_credentials", resource=BILLING)
    with pytest.raises(PermissionError, match="invalid_token"):
        example["introspect"](billing["access_token"], "orders-api", env["api_secrets"]["orders-api"])
    assert example["introspect"](own["access_token"], "orders-api", env["api_secrets"]["orders-api"])["active"]


def consent_page(env, browser, scope, locale):
    """The page /authorize shows (following redirects inside this server), or None when it
    went straight back to the client."""
    client = session(env, CLIENT, scope)
    url, _ = client.create_authorization_url(env["discovery"]["authorization_endpoint"], nonce="n",
                                             code_verifier=secrets.token_urlsafe(48), ui_locales=locale)
    response = browser.session.get(url, allow_redirects=False, timeout=10)
    while response.status_code in (302, 303):
        location = urllib.parse.urljoin(env["base"], response.headers["Location"])
        if not location.startswith(env["base"]):
            return None
        response = browser.session.get(location, allow_redirects=False, timeout=10)
    assert 'action="/authorize/consent"' in response.text, response.text[:300]
    return response.text


def test_consent_shows_api_scopes_and_a_new_api_scope_asks_again(env, browser):
    page = consent_page(env, browser, "openid orders:read", "ja")
    assert "Orders: 注文の閲覧" in page
    assert "Orders: Read your orders" in consent_page(env, browser, "openid orders:read", "en")
    # Consent given: the same request goes straight to the client.
    authorize(env, browser, "openid orders:read")
    assert consent_page(env, browser, "openid orders:read", "en") is None
    # A scope of the API the user has not seen yet asks again.
    page = consent_page(env, browser, "openid orders:read orders:write", "en")
    assert "Orders: Place orders" in page


def test_the_issuer_as_resource_gives_a_token_for_userinfo(env, browser):
    client, callback, verifier = authorize(env, browser, "openid profile orders:read")
    token = client.fetch_token(env["discovery"]["token_endpoint"], authorization_response=callback,
                               code_verifier=verifier, resource=env["discovery"]["issuer"])
    assert verify(env, token["access_token"], env["discovery"]["issuer"])["scope"] == "openid profile"
    userinfo = requests.get(env["discovery"]["userinfo_endpoint"],
                            headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=10)
    assert userinfo.status_code == 200 and userinfo.json()["sub"]


def test_signed_introspection_response_for_a_resource_server(env):
    token = OAuth2Session(CLIENT, env["secret"]).fetch_token(
        env["discovery"]["token_endpoint"], grant_type="client_credentials", scope="orders:read")
    response = requests.post(env["discovery"]["introspection_endpoint"], data={"token": token["access_token"]},
                             auth=("orders-api", env["api_secrets"]["orders-api"]), timeout=10,
                             headers={"Accept": "application/token-introspection+jwt"})
    assert response.headers["Content-Type"] == "application/token-introspection+jwt"
    assert pyjwt.get_unverified_header(response.text)["typ"] == "token-introspection+jwt"
    key = pyjwt.PyJWKClient(env["discovery"]["jwks_uri"]).get_signing_key_from_jwt(response.text)
    claims = pyjwt.decode(response.text, key.key, algorithms=["RS256"], audience="orders-api",
                          issuer=env["discovery"]["issuer"])
    assert claims["token_introspection"]["active"] is True
    assert claims["token_introspection"]["aud"] == ORDERS


def test_reload_swaps_the_apis_with_the_clients():
    """SIGHUP (`clients reload`) re-reads `resources` like `clients`, without a restart."""
    port = free_port()
    base = f"http://localhost:{port}"
    folder = tempfile.mkdtemp(prefix="auth-server-resources-reload-")
    Path(folder).chmod(0o755)
    secret = "reload-secret-" + uuid.uuid4().hex + uuid.uuid4().hex
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(folder) / "var"),
        "public_dir": str(ROOT / "public"),
        "clients": [{"client_id": "svc", "redirect_uris": ["https://svc.example/cb"],
                     "client_secret_hash": hash_secret(secret), "grant_types": ["client_credentials"]}],
    }

    def ask():
        return requests.post(base + "/token", auth=("svc", secret), timeout=10,
                             data={"grant_type": "client_credentials", "resource": ORDERS})

    try:
        with serve(config, folder):
            assert ask().json()["error"] == "invalid_target"
            config["resources"] = [{"identifier": ORDERS, "name": "Orders", "allowed_clients": ["svc"]}]
            path = Path(folder) / "config.json"
            path.write_text(json.dumps(config))
            subprocess.run([binary(), "clients", "reload", "--config", str(path)], check=True, capture_output=True)
            deadline = time.time() + 30
            while ask().status_code != 200 and time.time() < deadline:
                time.sleep(0.2)
            token = ask().json()["access_token"]
            assert pyjwt.decode(token, options={"verify_signature": False})["aud"] == ORDERS
    finally:
        shutil.rmtree(folder, ignore_errors=True)
