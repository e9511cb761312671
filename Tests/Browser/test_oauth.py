"""A web client's sign-in through /authorize with a passkey, consent, the callback, then
RP-initiated logout, in headless Chromium against a real `auth-server serve`."""

import base64
import json
import secrets
import urllib.parse
import urllib.request
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_flows import NO_CONDITIONAL_UI, RelyingParty, server_with_client, sign_up_with_passkey, start_code_flow_with_passkey, wait

CLIENT_SECRET = "browser-rp-secret-" + secrets.token_urlsafe(32)


@pytest.fixture(scope="module")
def rp():
    relying_party = RelyingParty()
    yield relying_party
    relying_party.server.shutdown()


@pytest.fixture(scope="module")
def oauth_server(rp):
    client = {"client_id": "browser-rp", "post_logout_redirect_uris": [f"{rp.base}/signed-out"]}
    with server_with_client(rp, client, CLIENT_SECRET, "auth-server-browser-oauth-") as base:
        yield base


def test_web_client_sign_in_with_a_passkey_consent_callback_and_logout(driver, oauth_server, rp, artifacts):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI})
    # An account with a passkey, then a fresh browser session.
    email = f"oauth-{uuid.uuid4().hex[:8]}@example.com"
    sign_up_with_passkey(driver, oauth_server, email, "Grace Hopper")

    # The client sends the browser to /authorize.
    verifier, state, nonce = start_code_flow_with_passkey(driver, oauth_server, "browser-rp", f"{rp.base}/callback")

    # Consent for a client that is not first party.
    wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "form[action='/authorize/consent']")))
    assert "Example Shop" in driver.find_element(By.TAG_NAME, "main").text
    assert email in driver.find_element(By.TAG_NAME, "main").text
    driver.save_screenshot(str(artifacts / "oauth-consent.png"))
    driver.find_element(By.CSS_SELECTOR, "button[name=decision][value=allow]").click()

    wait(driver).until(lambda d: d.current_url.startswith(f"{rp.base}/callback"))
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(driver.current_url).query))
    assert query["state"] == state
    assert query["iss"] == oauth_server

    # The client redeems the code.
    request = urllib.request.Request(
        f"{oauth_server}/token",
        data=urllib.parse.urlencode({
            "grant_type": "authorization_code", "code": query["code"], "redirect_uri": f"{rp.base}/callback",
            "code_verifier": verifier,
        }).encode(),
        headers={"Authorization": "Basic " + base64.b64encode(f"browser-rp:{CLIENT_SECRET}".encode()).decode()})
    with urllib.request.urlopen(request, timeout=10) as response:
        tokens = json.load(response)
    payload = tokens["id_token"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["nonce"] == nonce
    assert "user" in claims["amr"] and ({"hwk", "swk"} & set(claims["amr"]))

    # RP-initiated logout with the ID token as hint: no confirmation, back to the client.
    driver.get(f"{oauth_server}/logout?" + urllib.parse.urlencode({
        "id_token_hint": tokens["id_token"], "post_logout_redirect_uri": f"{rp.base}/signed-out", "state": "bye",
    }))
    wait(driver).until(lambda d: d.current_url.startswith(f"{rp.base}/signed-out"))
    assert dict(urllib.parse.parse_qsl(urllib.parse.urlparse(driver.current_url).query))["state"] == "bye"
    driver.get(f"{oauth_server}/account")
    wait(driver).until(lambda d: "/signin" in d.current_url)


def test_deny_stays_deny_whatever_the_request_carried(driver, oauth_server, rp):
    """The attack: a link to /authorize with `decision=allow` of its own. The consent page put it
    in its form ahead of the buttons, so Chromium posted `allow` first when the user pressed Deny."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI})
    sign_up_with_passkey(driver, oauth_server, f"deny-{uuid.uuid4().hex[:8]}@example.com", "Ada Lovelace")
    _, state, _ = start_code_flow_with_passkey(
        driver, oauth_server, "browser-rp", f"{rp.base}/callback", extra=[("decision", "allow")])
    wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "form[action='/authorize/consent']")))
    driver.find_element(By.CSS_SELECTOR, "button[name=decision][value=deny]").click()
    wait(driver).until(lambda d: d.current_url.startswith(f"{rp.base}/callback"))
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(driver.current_url).query))
    assert query.get("error") == "access_denied"
    assert "code" not in query
    assert query["state"] == state
