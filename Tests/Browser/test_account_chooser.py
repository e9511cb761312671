"""Several accounts signed in in one browser, in headless Chromium against a real
`auth-server serve`: the chooser at /authorize (prompt=select_account, login_hint,
id_token_hint), continuing as each account, signing out of one account or all, and the
account page's switch."""

import base64
import hashlib
import json
import secrets
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_flows import NO_CONDITIONAL_UI, RelyingParty, server_with_client, wait

CLIENT_SECRET = "chooser-rp-secret-" + secrets.token_urlsafe(32)
PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="module")
def rp():
    relying_party = RelyingParty()
    yield relying_party
    relying_party.server.shutdown()


@pytest.fixture(scope="module")
def oauth_server(rp):
    with server_with_client(rp, {"client_id": "chooser-rp"}, CLIENT_SECRET, "auth-server-browser-chooser-") as base:
        yield base


def path_of(url):
    return urllib.parse.urlsplit(url).path


def unique_email(label):
    return f"{label}-{uuid.uuid4().hex[:8]}@example.com"


def sign_up(driver, base, email, name):
    """Creates an account with a password, then forgets the browser's cookies."""
    driver.get(f"{base}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.ID, "password-signup").click()
    wait(driver).until(lambda d: path_of(d.current_url) == "/account")
    driver.delete_all_cookies()


def sign_in(driver, base, email):
    """Signs in on the sign-in page as one more account of this browser."""
    driver.get(f"{base}/signin?prompt=login&return_to=%2Faccount")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "#password-form button[type=submit]").click()
    wait(driver).until(lambda d: path_of(d.current_url) in ("/account", "/passkey-prompt"))
    if path_of(driver.current_url) == "/passkey-prompt":
        driver.find_element(By.ID, "prompt-skip").click()
        wait(driver).until(lambda d: path_of(d.current_url) == "/account")
    wait(driver).until(lambda d: email in d.find_element(By.ID, "account-email").text)


@pytest.fixture
def two_accounts(driver, oauth_server):
    """A browser signed in as Ada, then as Grace (current)."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI})
    ada, grace = unique_email("ada"), unique_email("grace")
    sign_up(driver, oauth_server, ada, "Ada Lovelace")
    sign_up(driver, oauth_server, grace, "Grace Hopper")
    sign_in(driver, oauth_server, ada)
    sign_in(driver, oauth_server, grace)
    return ada, grace


class Flow:
    """One authorization request of the client: PKCE, state, nonce."""

    def __init__(self, base, rp, **extra):
        self.base, self.rp = base, rp
        self.verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(self.verifier.encode()).digest()).rstrip(b"=").decode()
        self.state, self.nonce = secrets.token_urlsafe(12), secrets.token_urlsafe(12)
        self.url = f"{base}/authorize?" + urllib.parse.urlencode({
            "response_type": "code", "client_id": "chooser-rp", "redirect_uri": f"{rp.base}/callback",
            "scope": "openid email", "state": self.state, "nonce": self.nonce, "code_challenge": challenge,
            "code_challenge_method": "S256", **extra,
        })

    def callback(self, driver):
        """Waits for the client's callback (allowing consent when asked); its query."""
        def arrived(d):
            if d.current_url.startswith(f"{self.rp.base}/callback"):
                return True
            allow = d.find_elements(By.CSS_SELECTOR, "button[name=decision][value=allow]")
            if allow:
                allow[0].click()
            return False
        wait(driver).until(arrived)
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
        assert query["state"] == self.state
        return query

    def tokens(self, driver):
        query = self.callback(driver)
        request = urllib.request.Request(
            f"{self.base}/token",
            data=urllib.parse.urlencode({
                "grant_type": "authorization_code", "code": query["code"], "redirect_uri": f"{self.rp.base}/callback",
                "code_verifier": self.verifier,
            }).encode(),
            headers={"Authorization": "Basic " + base64.b64encode(f"chooser-rp:{CLIENT_SECRET}".encode()).decode()})
        with urllib.request.urlopen(request, timeout=10) as response:
            tokens = json.load(response)
        claims = decode(tokens["id_token"])
        assert claims["nonce"] == self.nonce
        return tokens, claims


def decode(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def email_of(base, tokens):
    request = urllib.request.Request(f"{base}/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["email"]


def chooser_entries(driver):
    wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#chooser-form")))
    return driver.execute_script(
        "return [...document.querySelectorAll('#chooser-form button[name=session_id]')].map(b => b.textContent)")


def choose(driver, email):
    for button in driver.find_elements(By.CSS_SELECTOR, "#chooser-form button[name=session_id]"):
        if email in button.text:
            button.click()
            return
    raise AssertionError(f"{email} is not in the chooser")


def test_select_account_shows_the_chooser_and_continues_as_each_account(driver, oauth_server, rp, two_accounts,
                                                                        artifacts):
    ada, grace = two_accounts
    subjects = {}
    for email in (ada, grace):
        flow = Flow(oauth_server, rp, prompt="select_account")
        driver.get(flow.url)
        entries = chooser_entries(driver)
        assert len(entries) == 2
        assert any(ada in e and "Ada Lovelace" in e for e in entries)
        assert any(grace in e and "Grace Hopper" in e for e in entries)
        main = driver.find_element(By.TAG_NAME, "main").text
        assert "Example Shop" in main
        link = driver.find_element(By.ID, "use-another-account").get_attribute("href")
        assert path_of(link) == "/signin" and "prompt=login" in link
        assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
        driver.save_screenshot(str(artifacts / "chooser-en.png"))
        choose(driver, email)
        tokens, claims = flow.tokens(driver)
        assert email_of(oauth_server, tokens) == email
        subjects[email] = claims["sub"]
    assert subjects[ada] != subjects[grace]

    # In Japanese too.
    driver.get(Flow(oauth_server, rp, prompt="select_account", ui_locales="ja").url)
    assert len(chooser_entries(driver)) == 2
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ja"
    assert "別のアカウントを使う" in driver.find_element(By.ID, "use-another-account").text
    driver.save_screenshot(str(artifacts / "chooser-ja.png"))


def test_use_another_account_adds_a_third(driver, oauth_server, rp, two_accounts):
    ada, grace = two_accounts
    third = unique_email("katherine")
    sign_up(driver, oauth_server, third, "Katherine Johnson")
    # sign_up forgot the cookies: sign the two in again.
    sign_in(driver, oauth_server, ada)
    sign_in(driver, oauth_server, grace)
    flow = Flow(oauth_server, rp, prompt="select_account")
    driver.get(flow.url)
    chooser_entries(driver)
    driver.find_element(By.ID, "use-another-account").click()
    wait(driver).until(lambda d: path_of(d.current_url) == "/signin")
    driver.find_element(By.ID, "email").send_keys(third)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "#password-form button[type=submit]").click()
    tokens, _ = flow.tokens(driver)
    assert email_of(oauth_server, tokens) == third
    driver.get(f"{oauth_server}/accounts")
    assert len(chooser_entries(driver)) == 3


def test_login_hint_naming_the_other_account_preselects_it(driver, oauth_server, rp, two_accounts):
    ada, grace = two_accounts
    flow = Flow(oauth_server, rp, login_hint=ada)
    driver.get(flow.url)
    entries = chooser_entries(driver)
    assert ada in entries[0]
    focused = driver.switch_to.active_element
    assert focused.get_attribute("name") == "session_id" and ada in focused.text
    focused.click()
    tokens, _ = flow.tokens(driver)
    assert email_of(oauth_server, tokens) == ada

    # Under prompt=none nobody may choose: account_selection_required.
    driver.get(f"{oauth_server}/accounts")
    choose(driver, grace)
    wait(driver).until(lambda d: path_of(d.current_url) == "/account")
    silent = Flow(oauth_server, rp, login_hint=ada, prompt="none")
    driver.get(silent.url)
    wait(driver).until(lambda d: d.current_url.startswith(f"{rp.base}/callback"))
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
    assert query["error"] == "account_selection_required"


def test_id_token_hint_naming_the_other_account(driver, oauth_server, rp, two_accounts):
    ada, grace = two_accounts
    # An ID token of Ada's, then Grace current again.
    flow = Flow(oauth_server, rp, prompt="select_account")
    driver.get(flow.url)
    chooser_entries(driver)
    choose(driver, ada)
    tokens, ada_claims = flow.tokens(driver)
    hint = tokens["id_token"]
    driver.get(f"{oauth_server}/accounts")
    choose(driver, grace)
    wait(driver).until(lambda d: grace in d.find_element(By.ID, "account-email").text)

    # Interactive: the chooser, and continuing as Ada answers for Ada.
    interactive = Flow(oauth_server, rp, id_token_hint=hint)
    driver.get(interactive.url)
    chooser_entries(driver)
    choose(driver, ada)
    _, claims = interactive.tokens(driver)
    assert claims["sub"] == ada_claims["sub"]

    # prompt=none with Grace current: login_required, never a token for Grace.
    driver.get(f"{oauth_server}/accounts")
    choose(driver, grace)
    wait(driver).until(lambda d: grace in d.find_element(By.ID, "account-email").text)
    silent = Flow(oauth_server, rp, id_token_hint=hint, prompt="none")
    driver.get(silent.url)
    wait(driver).until(lambda d: d.current_url.startswith(f"{rp.base}/callback"))
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(driver.current_url).query))
    assert query["error"] == "login_required"


def test_sign_out_of_one_account_keeps_the_other_then_sign_out_of_all(driver, oauth_server, rp, two_accounts):
    ada, grace = two_accounts
    # Grace signs in to the client (her session gets a client), then signs out of Grace only.
    flow = Flow(oauth_server, rp)
    driver.get(flow.url)
    tokens, _ = flow.tokens(driver)
    assert email_of(oauth_server, tokens) == grace
    driver.get(f"{oauth_server}/accounts")
    chooser_entries(driver)
    grace_button = next(
        button
        for button in driver.find_elements(By.CSS_SELECTOR, "#chooser-signout-form button[name=session_id]")
        if grace in button.text)
    grace_button.click()
    # Back on the chooser, which lists the account still signed in: a new page (the one the
    # button was on is still at /accounts until the answer arrives).
    wait(driver).until(EC.staleness_of(grace_button))
    wait(driver).until(lambda d: path_of(d.current_url) == "/accounts")
    entries = chooser_entries(driver)
    assert len(entries) == 1 and ada in entries[0]
    driver.get(f"{oauth_server}/account")
    assert ada in driver.find_element(By.ID, "account-email").text
    # Grace's session ended with her tokens; Ada's did not.
    with pytest.raises(urllib.error.HTTPError):
        email_of(oauth_server, tokens)

    # Ada continues to the client without being asked.
    flow = Flow(oauth_server, rp)
    driver.get(flow.url)
    tokens, _ = flow.tokens(driver)
    assert email_of(oauth_server, tokens) == ada

    driver.get(f"{oauth_server}/accounts")
    chooser_entries(driver)
    driver.find_element(By.ID, "signout-all").click()
    wait(driver).until(lambda d: path_of(d.current_url) == "/signin")
    driver.get(f"{oauth_server}/account")
    wait(driver).until(lambda d: path_of(d.current_url) == "/signin")


def test_the_account_page_says_who_and_switches(driver, oauth_server, two_accounts):
    ada, grace = two_accounts
    driver.get(f"{oauth_server}/account")
    assert grace in driver.find_element(By.ID, "account-email").text
    driver.find_element(By.ID, "switch-account").click()
    entries = chooser_entries(driver)
    assert len(entries) == 2
    assert "Current" in [e for e in entries if grace in e][0]
    choose(driver, ada)
    wait(driver).until(lambda d: path_of(d.current_url) == "/account")
    assert ada in driver.find_element(By.ID, "account-email").text
    # "Use another account" leads to the sign-in page, coming back to the account page.
    driver.find_element(By.ID, "switch-account").click()
    driver.find_element(By.ID, "use-another-account").click()
    wait(driver).until(lambda d: path_of(d.current_url) == "/signin")
    assert driver.find_element(By.ID, "email").get_attribute("value") == ""
