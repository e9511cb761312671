"""Signing in through upstream providers in Chromium: a second `auth-server serve` over TLS is
the generic OpenID provider of the first ("Continue with Corp"), and a stand-in for Apple
serves Apple's authorize page, token endpoint and keys ("Sign in with Apple", whose answer is
a cross-site form_post). A client of the first server waits for its code at the end.

Apple's stand-in is Tests/pysupport/apple_standin.py.

Covered: the buttons in English and Japanese; a sign-up through the upstream that lands back
at the client with a code; a second sign-in that reuses the link; an existing verified account
that must sign in before the link is made; a sign-in to another account that links nothing;
Apple's form_post; unlinking refused when the identity is the last way in."""

import base64
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import uuid
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import DATA_DIRS, ROOT, binary, free_port, run_sql, serve
from apple_standin import AppleStandIn
from browser_flows import RelyingParty
from browser_flows import wait as wait_for


class wait:  # noqa: N801 — `wait(driver).until(…)`, saying where the browser was on a timeout
    def __init__(self, driver, seconds=20):
        self.driver = driver
        self.waiter = wait_for(driver, seconds)

    def until(self, condition):
        try:
            return self.waiter.until(condition)
        except Exception as error:  # noqa: BLE001
            body = self.driver.find_element(By.TAG_NAME, "body").text[:1500] if self.driver.find_elements(
                By.TAG_NAME, "body") else ""
            raise AssertionError(f"waited in vain at {self.driver.current_url}:\n{body}") from error

sys.path.insert(0, str(ROOT / "Tests" / "Conformance"))
from conformance.server import serve as serve_tls  # noqa: E402
from conformance.tls import make_certificates  # noqa: E402

PASSWORD = "correct horse battery staple"
TEAM_ID = "TEAM123456"
KEY_ID = "KEY1234567"
SERVICES_ID = "com.example.web"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hash_secret(secret):
    result = subprocess.run([binary(), "clients", "hash-secret"], input=secret + "\n", capture_output=True,
                            text=True, check=True)
    return dict(line.split(": ", 1) for line in result.stdout.strip().splitlines())["client_secret_hash"]


@pytest.fixture(scope="module")
def sites():
    folder = Path(tempfile.mkdtemp(prefix="auth-server-upstream-browser-"))
    os.chmod(folder, 0o755)
    paths = make_certificates(folder)
    apple = AppleStandIn(paths, team_id=TEAM_ID, key_id=KEY_ID, folder=folder)
    # The browser reaches Apple's page on another site (127.0.0.1) than this server (localhost),
    # as it reaches appleid.apple.com: the answer is a cross-site form_post.
    endpoints = apple.endpoints | {"authorize": apple.endpoints["authorize"].replace("localhost", "127.0.0.1")}
    rp = RelyingParty()
    up_port, port = free_port(), free_port()
    upstream, base = f"https://localhost:{up_port}", f"http://localhost:{port}"
    secret = "downstream-" + uuid.uuid4().hex
    (folder / "upstream-secret").write_text(secret)
    up_folder, down_folder = folder / "upstream", folder / "downstream"
    up_folder.mkdir()
    down_folder.mkdir()
    for f in (up_folder, down_folder):
        os.chmod(f, 0o755)
    up_config = {
        "issuer": upstream, "listen": f"127.0.0.1:{up_port}", "data_dir": str(up_folder / "var"),
        "public_dir": str(ROOT / "public"), "webauthn": {"rp_name": "Corp ID"},
        "tls_cert_file": str(paths["cert"]), "tls_key_file": str(paths["key"]),
        "clients": [{"client_id": "downstream", "client_name": "Example ID", "application_type": "web",
                     "redirect_uris": [f"{base}/upstream/corp/callback"],
                     "token_endpoint_auth_method": "client_secret_basic", "client_secret_hash": hash_secret(secret),
                     "grant_types": ["authorization_code"], "scope": "openid profile email"}],
    }
    app_secret = "app-" + uuid.uuid4().hex
    config = {
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(down_folder / "var"),
        "public_dir": str(ROOT / "public"), "webauthn": {"rp_name": "Example ID"},
        "clients": [{"client_id": "shop", "client_name": "Example Shop", "application_type": "web",
                     "redirect_uris": [f"{rp.base}/callback"], "token_endpoint_auth_method": "client_secret_basic",
                     "client_secret_hash": hash_secret(app_secret), "grant_types": ["authorization_code"],
                     "scope": "openid profile email"}],
        "upstream_providers": [
            {"id": "apple", "type": "apple", "team_id": TEAM_ID, "services_id": SERVICES_ID, "key_id": KEY_ID,
             "private_key_file": str(apple.p8_path), "endpoints_for_tests": endpoints,
             "allow_loopback_for_tests": True, "ca_file": str(paths["ca"])},
            {"id": "corp", "type": "oidc", "label": "Corp", "issuer": upstream, "client_id": "downstream",
             "client_secret_file": str(folder / "upstream-secret"), "ca_file": str(paths["ca"]),
             "allow_loopback_for_tests": True},
        ],
    }
    try:
        with serve_tls(up_config, up_folder, paths["ca"]), serve(config, down_folder):
            DATA_DIRS[upstream] = up_folder
            DATA_DIRS[base] = down_folder
            yield {"base": base, "upstream": upstream, "ca": str(paths["ca"]), "rp": rp, "apple": apple}
    finally:
        apple.close()
        rp.server.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def browser(driver):
    """The driver, trusting this run's certificate authority the way a user's browser trusts
    a real provider's certificate (the servers themselves verify against the CA)."""
    driver.execute_cdp_cmd("Security.setIgnoreCertificateErrors", {"ignore": True})
    return driver


def upstream_account(sites, verified=True):
    """An account at the upstream provider, its address verified there."""
    email = f"corp-{uuid.uuid4().hex[:8]}@example.com"
    session = requests.Session()
    session.verify = sites["ca"]
    session.trust_env = False  # this run's CA only, never REQUESTS_CA_BUNDLE
    csrf = session.get(sites["upstream"] + "/api/csrf", timeout=10).json()["csrf_token"]
    response = session.post(sites["upstream"] + "/api/signup/password", timeout=10,
                            json={"email": email, "display_name": "Corp User", "password": PASSWORD},
                            headers={"X-CSRF-Token": csrf, "Origin": sites["upstream"]})
    assert response.status_code in (200, 201), response.text
    if verified:
        run_sql(sites["upstream"], f"UPDATE account_emails SET verified_at = now() WHERE normalized_email = '{email}'")
    return email


def local_account(sites, email, verified=True):
    session = requests.Session()
    csrf = session.get(sites["base"] + "/api/csrf", timeout=10).json()["csrf_token"]
    response = session.post(sites["base"] + "/api/signup/password", timeout=10,
                            json={"email": email, "display_name": "Local User", "password": PASSWORD},
                            headers={"X-CSRF-Token": csrf, "Origin": sites["base"]})
    assert response.status_code in (200, 201), response.text
    if verified:
        run_sql(sites["base"], f"UPDATE account_emails SET verified_at = now() WHERE normalized_email = '{email}'")


def authorize_url(sites):
    return f"{sites['base']}/authorize?" + urllib.parse.urlencode({
        "response_type": "code", "client_id": "shop", "redirect_uri": sites["rp"].base + "/callback",
        "scope": "openid email", "state": "st-" + secrets.token_hex(4), "nonce": "n-" + secrets.token_hex(4),
        "code_challenge": b64url(os.urandom(32)), "code_challenge_method": "S256"})


def sign_in_at(driver, email):
    """The password form of whichever server's /signin the browser is on."""
    wait(driver).until(EC.presence_of_element_located((By.ID, "password-form")))
    field = driver.find_element(By.ID, "email")
    field.clear()
    field.send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "#password-form button[type=submit]").click()


def allow_consent(driver, origin):
    wait(driver).until(lambda d: d.current_url.startswith(origin) and d.find_elements(
        By.CSS_SELECTOR, "button[name=decision][value=allow]"))
    driver.find_element(By.CSS_SELECTOR, "button[name=decision][value=allow]").click()


def continue_with_corp(driver, sites, email, consent=True):
    wait(driver).until(EC.element_to_be_clickable((By.ID, "upstream-corp"))).click()
    # At the upstream, or (signed in and consented there already) straight back here.
    wait(driver).until(lambda d: d.current_url.startswith(sites["upstream"]) or "/signin" not in d.current_url)
    if driver.current_url.startswith(sites["upstream"] + "/signin"):
        sign_in_at(driver, email)
    if consent:
        allow_consent(driver, sites["upstream"])


def account_json(driver, base):
    driver.get(base + "/api/account")
    return json.loads(driver.find_element(By.TAG_NAME, "body").text)


def forget_downstream_session(driver, sites):
    driver.get(sites["base"] + "/signin")
    for name in ("session", "accounts"):
        driver.delete_cookie(name)


def test_buttons_in_english_and_japanese(browser, sites, artifacts):
    browser.get(sites["base"] + "/signin")
    apple = browser.find_element(By.ID, "upstream-apple")
    assert apple.text == "Sign in with Apple"
    assert browser.find_element(By.ID, "upstream-corp").text == "Continue with Corp"
    # Apple's button: the logo, the same size as the page's other buttons.
    assert apple.find_elements(By.CSS_SELECTOR, "svg.upstream-logo")
    password_button = browser.find_element(By.CSS_SELECTOR, "#password-form button[type=submit]")
    assert apple.size["width"] == password_button.size["width"]
    assert abs(apple.size["height"] - password_button.size["height"]) <= 2
    browser.save_screenshot(str(artifacts / "upstream-signin-en.png"))
    browser.get(sites["base"] + "/signup")
    assert browser.find_element(By.ID, "upstream-apple").text == "Continue with Apple"
    browser.get(sites["base"] + "/signin?ui_locales=ja")
    assert browser.find_element(By.ID, "upstream-apple").text == "Appleでサインイン"
    assert browser.find_element(By.ID, "upstream-corp").text == "Corpで続ける"
    browser.save_screenshot(str(artifacts / "upstream-signin-ja.png"))
    browser.get(sites["base"] + "/signup?ui_locales=ja")
    assert browser.find_element(By.ID, "upstream-apple").text == "Appleで続ける"


def test_sign_up_through_the_upstream_lands_at_the_client_then_reuses_the_link(browser, sites):
    email = upstream_account(sites)
    browser.get(authorize_url(sites))
    wait(browser).until(lambda d: "/signin" in d.current_url)
    continue_with_corp(browser, sites, email)
    # Back here: a new account, then this server's consent for the shop, then the shop's code.
    allow_consent(browser, sites["base"])
    wait(browser).until(lambda d: d.current_url.startswith(sites["rp"].base + "/callback"))
    assert "code=" in browser.current_url
    account = account_json(browser, sites["base"])
    assert account["email"] == email and account["email_verified"] is True

    # Signed out here, still signed in at the upstream: the same account again, no new one.
    forget_downstream_session(browser, sites)
    browser.get(sites["base"] + "/signin")
    continue_with_corp(browser, sites, email, consent=False)
    wait(browser).until(lambda d: d.current_url.startswith(sites["base"] + "/account"))
    assert account_json(browser, sites["base"])["id"] == account["id"]


def test_an_existing_verified_account_signs_in_before_the_link(browser, sites):
    email = upstream_account(sites)
    local_account(sites, email)
    browser.get(sites["base"] + "/signin")
    continue_with_corp(browser, sites, email)
    prove = wait(browser).until(EC.presence_of_element_located((By.ID, "prove-control")))
    assert email in prove.text
    browser.find_element(By.ID, "prove-control-sign-in").click()
    sign_in_at(browser, email)
    wait(browser).until(EC.element_to_be_clickable((By.ID, "link-confirm"))).click()
    wait(browser).until(lambda d: d.current_url.startswith(sites["base"] + "/account"))
    browser.get(sites["base"] + "/account")
    identities = wait(browser).until(EC.presence_of_element_located((By.ID, "identity-list")))
    assert "Corp" in identities.text and email in identities.text


def test_signing_in_to_another_account_links_nothing(browser, sites):
    email = upstream_account(sites)
    local_account(sites, email)
    other = f"other-{uuid.uuid4().hex[:8]}@example.com"
    local_account(sites, other)
    browser.get(sites["base"] + "/signin")
    continue_with_corp(browser, sites, email)
    wait(browser).until(EC.presence_of_element_located((By.ID, "prove-control")))
    browser.find_element(By.ID, "prove-control-sign-in").click()
    sign_in_at(browser, other)
    code = wait(browser).until(EC.presence_of_element_located((By.ID, "error-code")))
    assert code.text == "not_signed_in"
    assert not browser.find_elements(By.ID, "link-confirm")
    assert run_sql(sites["base"], "SELECT count(*) FROM upstream_identities i JOIN account_emails e "
                   f"ON e.account_id = i.account_id WHERE e.normalized_email IN ('{email}', '{other}')").strip() == "0"


def test_sign_in_with_apple_form_post_then_unlinking_the_last_way_in_is_refused(browser, sites):
    email = f"apple-{uuid.uuid4().hex[:8]}@privaterelay.appleid.com"
    browser.get(authorize_url(sites))
    wait(browser).until(EC.element_to_be_clickable((By.ID, "upstream-apple"))).click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "apple-email"))).send_keys(email)
    browser.find_element(By.ID, "apple-continue").click()
    # Apple's cross-site form_post, relayed by this server's own page, then the shop's consent.
    allow_consent(browser, sites["base"])
    wait(browser).until(lambda d: d.current_url.startswith(sites["rp"].base + "/callback"))
    account = account_json(browser, sites["base"])
    # The name came from Apple's `user` member (first authorization only).
    assert account["email"] == email and account["display_name"] == "Taro Apple"
    # Apple's client secret was an ES256 JWT the stand-in verified.
    assert sites["apple"].token_requests[-1] == {"grant_type": "authorization_code", "client_id": SERVICES_ID,
                                                 "outcome": "ok"}
    # Apple's refresh token is kept for revocation, sealed: never in the clear.
    refresh = list(sites["apple"].refresh_tokens)[-1]
    assert run_sql(sites["base"], "SELECT position(convert_to('" + refresh + "', 'UTF8') IN refresh_token_ciphertext) "
                   f"FROM upstream_identities WHERE email = '{email}'").strip() == "0"

    browser.get(sites["base"] + "/account")
    item = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#identity-list .identity-item")))
    assert "Apple" in item.text
    item.find_element(By.CSS_SELECTOR, "button[id^=unlink-]").click()
    notice = wait(browser).until(EC.presence_of_element_located((By.ID, "identities-notice")))
    assert "only way" in notice.text
    assert browser.find_elements(By.CSS_SELECTOR, "#identity-list .identity-item")


def apple_to_the_proof_page(browser, sites):
    """Sign in with Apple with the address of a local account that holds it verified: the
    browser ends on the proof-of-control page. Returns the address and Apple's refresh token."""
    email = f"owner-{uuid.uuid4().hex[:8]}@example.com"
    local_account(sites, email)
    browser.get(sites["base"] + "/signin")
    wait(browser).until(EC.element_to_be_clickable((By.ID, "upstream-apple"))).click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "apple-email"))).send_keys(email)
    browser.find_element(By.ID, "apple-continue").click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "prove-control")))
    return email, list(sites["apple"].issued_refresh_tokens)[-1]


def test_apple_linked_after_proof_of_control_is_revoked_at_apple_when_unlinked(browser, sites):
    """Sign in with Apple with an address an account holds verified: the link waits until the
    account's owner signs in, and Apple's refresh token waits with it (sealed), so that the
    link's end revokes it at Apple. Apple is down at the first attempt: the server tries again."""
    email, refresh = apple_to_the_proof_page(browser, sites)
    browser.find_element(By.ID, "prove-control-sign-in").click()
    sign_in_at(browser, email)
    wait(browser).until(EC.element_to_be_clickable((By.ID, "link-confirm"))).click()
    wait(browser).until(lambda d: d.current_url.startswith(sites["base"] + "/account"))
    assert run_sql(sites["base"], "SELECT count(*) FROM upstream_identities i JOIN account_emails e "
                   f"ON e.account_id = i.account_id WHERE e.normalized_email = '{email}' "
                   "AND i.refresh_token_ciphertext IS NOT NULL").strip() == "1"

    sites["apple"].revocations_unavailable = 1
    browser.get(sites["base"] + "/account")
    item = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#identity-list .identity-item")))
    assert "Apple" in item.text
    item.find_element(By.CSS_SELECTOR, "button[id^=unlink-]").click()
    revoked = {"client_id": SERVICES_ID, "token": refresh, "token_type_hint": "refresh_token"}
    wait_for(browser, 30).until(lambda _: revoked in sites["apple"].revoked)
    assert sites["apple"].revocations_unavailable == 0
    assert run_sql(sites["base"], "SELECT count(*) FROM upstream_token_revocations").strip() == "0"


def test_apple_token_of_a_link_left_unproven_is_revoked_at_apple(browser, sites):
    """A link that waits for proof of control and expires unused leaves no Apple token behind:
    the token waited in the revocation queue, due once the link has expired."""
    email, refresh = apple_to_the_proof_page(browser, sites)
    revoked = {"client_id": SERVICES_ID, "token": refresh, "token_type_hint": "refresh_token"}
    assert revoked not in sites["apple"].revoked
    # Fifteen minutes and one later: the link has expired, the revocation is due.
    run_sql(sites["base"], "UPDATE upstream_pending_links SET expires_at = now() - interval '1 minute' "
            "WHERE consumed_at IS NULL; UPDATE upstream_token_revocations SET next_attempt_at = now()")
    wait_for(browser, 30).until(lambda _: revoked in sites["apple"].revoked)
    assert run_sql(sites["base"], "SELECT count(*) FROM upstream_identities i JOIN account_emails e "
                   f"ON e.account_id = i.account_id WHERE e.normalized_email = '{email}'").strip() == "0"
