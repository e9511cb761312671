"""Every sign-in, sign-up and passkey flow of the pages, in headless Chromium."""

import json
import time
import uuid

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from browser_flows import NO_CONDITIONAL_UI, wait

PASSWORD = "correct horse battery staple"


def unique_email(label="user"):
    return f"{label}-{uuid.uuid4().hex[:8]}@example.com"


def at_path(driver, path, seconds=15):
    wait(driver, seconds).until(lambda d: d.current_url.split("?")[0].endswith(path))


def webauthn_calls(driver):
    return json.loads(driver.execute_script("return sessionStorage.getItem('webauthn-calls') || '[]'"))


def passkey_names(driver):
    # Read in one script call: the list may be mid-reload after an action.
    return driver.execute_script(
        "return [...document.querySelectorAll('#passkey-list .passkey-name')].map(e => e.textContent)")


def sign_up_with_password(driver, server, email, name="Ada Lovelace"):
    driver.get(f"{server}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.ID, "password-signup").click()
    at_path(driver, "/account")


def sign_out(driver):
    driver.find_element(By.CSS_SELECTOR, "#signout-form button").click()
    at_path(driver, "/signin")


def add_passkey(driver):
    before = len(passkey_names(driver))
    driver.find_element(By.ID, "add-passkey").click()
    wait(driver).until(lambda d: len(passkey_names(d)) == before + 1)


def test_password_sign_up_sign_out_and_sign_in_with_the_conditional_upgrade(driver, server):
    email = unique_email()
    sign_up_with_password(driver, server, email)
    assert email in driver.find_element(By.ID, "account-email").text
    sign_out(driver)

    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{server}/signin?return_to=%2Faccount")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    started = time.monotonic()
    driver.find_element(By.CSS_SELECTOR, "#password-form button[type=submit]").click()
    # The pending conditional create must not hold the sign-in beyond its grace period.
    at_path(driver, "/account", seconds=20)
    assert time.monotonic() - started < 15
    calls = webauthn_calls(driver)
    assert {"kind": "create", "mediation": "conditional"} in [{"kind": c["kind"], "mediation": c["mediation"]} for c in calls]
    # The conditional get started on load was aborted before the upgrade, and it came first.
    kinds = [(c["kind"], c["mediation"]) for c in calls]
    assert kinds.index(("get", "conditional")) < kinds.index(("create", "conditional"))


def test_wrong_password_is_announced(driver, server):
    driver.get(f"{server}/signin")
    driver.find_element(By.ID, "email").send_keys(unique_email("nobody"))
    driver.find_element(By.ID, "password").send_keys("wrong password")
    driver.find_element(By.CSS_SELECTOR, "#password-form button[type=submit]").click()
    status = wait(driver).until(EC.visibility_of_element_located((By.ID, "status")))
    wait(driver).until(lambda d: "incorrect" in d.find_element(By.ID, "status").text)
    assert status.get_attribute("role") == "alert"
    assert driver.current_url.split("?")[0].endswith("/signin")


def test_add_a_passkey_then_modal_and_conditional_passkey_sign_in(driver, server):
    email = unique_email()
    sign_up_with_password(driver, server, email)
    add_passkey(driver)
    assert len(driver.get_credentials()) == 1
    # Signing out lands on /signin, whose conditional request would sign straight back in.
    driver.find_element(By.CSS_SELECTOR, "#signout-form button").click()
    # Let the sign-out navigation finish before starting over, so that no request of the
    # previous page is still pending when the next one starts. (/signin's conditional request
    # may sign straight back in faster than a poll: its recorded start also counts.)
    wait(driver).until(lambda d: not d.current_url.split("?")[0].endswith("/account")
                       or any(c["mediation"] == "conditional" for c in webauthn_calls(d)))
    wait(driver).until(lambda d: d.execute_script("return document.readyState") == "complete")

    # Conditional: pick the passkey from the email field's autofill. (With a virtual
    # authenticator Chromium may also complete the conditional request by itself.)
    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{server}/signin?prompt=login")
    wait(driver, 30).until(lambda d: any(c["mediation"] == "conditional" for c in webauthn_calls(d)))
    try:
        field = driver.find_element(By.ID, "email")
        field.click()
        field.send_keys(Keys.ARROW_DOWN)
        field.send_keys(Keys.ENTER)
    except (StaleElementReferenceException, NoSuchElementException, WebDriverException):
        # Already signed in and navigating away: the field left the document, between the
        # lookup and the click ("Node … does not belong to the document") or before it.
        pass
    at_path(driver, "/account")
    assert email in driver.find_element(By.ID, "account-email").text
    assert not [c for c in webauthn_calls(driver) if c["kind"] == "get" and c["mediation"] != "conditional"]

    # Modal: in a browser without conditional mediation only the button signs in.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI})
    sign_out(driver)
    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{server}/signin")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-button"))).click()
    at_path(driver, "/account")
    assert ("get", "required") in [(c["kind"], c["mediation"]) for c in webauthn_calls(driver)]
    assert email in driver.find_element(By.ID, "account-email").text
    # Both passkey sign-ins count as use: the password may now be removed.
    assert driver.find_elements(By.ID, "remove-password")


def test_passkey_sign_up(driver, server):
    email = unique_email("passkey")
    driver.get(f"{server}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys("Grace Hopper")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-signup"))).click()
    at_path(driver, "/account")
    assert email in driver.find_element(By.ID, "account-email").text
    assert len(passkey_names(driver)) == 1
    assert len(driver.get_credentials()) == 1
    section = driver.find_element(By.ID, "password-heading").find_element(By.XPATH, "..")
    assert "no password" in section.text


def test_rename_and_delete_a_passkey(driver, server):
    sign_up_with_password(driver, server, unique_email())
    add_passkey(driver)
    item = driver.find_element(By.CSS_SELECTOR, "#passkey-list li")
    item.find_element(By.CSS_SELECTOR, "button.rename").click()
    name = item.find_element(By.CSS_SELECTOR, ".rename-form input")
    name.clear()
    name.send_keys("My laptop")
    item.find_element(By.CSS_SELECTOR, ".rename-form button[type=submit]").click()
    wait(driver).until(lambda d: passkey_names(d) == ["My laptop"])

    driver.find_element(By.CSS_SELECTOR, "#passkey-list li button.delete").click()
    wait(driver).until(EC.alert_is_present()).accept()
    wait(driver).until(lambda d: d.find_elements(By.ID, "no-passkeys"))
    assert passkey_names(driver) == []


@pytest.mark.parametrize("language", ["en", "ja"])
def test_screenshots_of_every_page(driver, server, artifacts, language):
    driver.get(f"{server}/signin?ui_locales={language}")
    wait(driver).until(EC.visibility_of_element_located((By.ID, "passkey-button")))
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == language
    driver.save_screenshot(str(artifacts / f"signin-{language}.png"))

    driver.get(f"{server}/signin?ui_locales={language}")
    driver.find_element(By.ID, "email").send_keys(unique_email("nobody"))
    driver.find_element(By.ID, "password").send_keys("wrong password")
    driver.find_element(By.CSS_SELECTOR, "#password-form button[type=submit]").click()
    wait(driver).until(lambda d: d.find_element(By.ID, "status").text)
    expected = "正しくありません" if language == "ja" else "incorrect"
    assert expected in driver.find_element(By.ID, "status").text
    driver.save_screenshot(str(artifacts / f"signin-error-{language}.png"))

    driver.get(f"{server}/signup?ui_locales={language}")
    wait(driver).until(EC.visibility_of_element_located((By.ID, "passkey-signup")))
    driver.save_screenshot(str(artifacts / f"signup-{language}.png"))

    sign_up_with_password(driver, server, unique_email("shot"), name="山田 花子" if language == "ja" else "Ada Lovelace")
    add_passkey(driver)
    driver.get(f"{server}/account?ui_locales={language}")
    driver.set_window_size(1100, 1500)
    driver.save_screenshot(str(artifacts / f"account-{language}.png"))


def age_sign_in(server, email, minutes=10):
    """Moves the account's sign-ins `minutes` into the past: the session is no longer recent."""
    from conftest import run_sql

    run_sql(server, f"""UPDATE authentication_sessions SET auth_time = auth_time - interval '{minutes} minutes'
                        WHERE account_id = (SELECT account_id FROM account_emails WHERE normalized_email = '{email}')""")


def reauthentication_prompt(driver):
    return wait(driver).until(EC.visibility_of_element_located((By.ID, "reauthenticate")))


def test_an_old_session_adds_a_passkey_after_its_password_in_the_same_page(driver, server):
    email = unique_email("stale")
    sign_up_with_password(driver, server, email)
    age_sign_in(server, email)
    driver.find_element(By.ID, "add-passkey").click()
    prompt = reauthentication_prompt(driver)
    assert not prompt.find_elements(By.ID, "reauth-passkey")  # no passkey yet: the password only
    assert passkey_names(driver) == []
    prompt.find_element(By.ID, "reauth_password").send_keys("not the password")
    prompt.find_element(By.CSS_SELECTOR, "#reauth-password-form button[type=submit]").click()
    wait(driver).until(lambda d: "incorrect" in d.find_element(By.ID, "status").text)
    assert prompt.is_displayed()
    field = prompt.find_element(By.ID, "reauth_password")
    field.clear()
    field.send_keys(PASSWORD)
    prompt.find_element(By.CSS_SELECTOR, "#reauth-password-form button[type=submit]").click()
    # The same click goes on: the passkey is created and the page shows it.
    wait(driver).until(lambda d: len(passkey_names(d)) == 1)
    assert len(driver.get_credentials()) == 1
    assert not driver.find_element(By.ID, "reauthenticate").is_displayed()


def test_an_old_session_sets_a_password_after_its_passkey_in_the_same_page(driver, server):
    email = unique_email("stale-passkey")
    driver.get(f"{server}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys("Grace Hopper")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-signup"))).click()
    at_path(driver, "/account")
    age_sign_in(server, email)
    driver.find_element(By.ID, "new_password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "#password-change-form button[type=submit]").click()
    prompt = reauthentication_prompt(driver)
    assert not prompt.find_elements(By.ID, "reauth-password-form")  # no password yet: the passkey only
    calls = len(webauthn_calls(driver))
    prompt.find_element(By.ID, "reauth-passkey").click()
    # Re-authenticated with the passkey, the password is set: the page now asks for the current one.
    wait(driver).until(lambda d: d.find_elements(By.ID, "current_password"))
    assert ("get", None) in [(c["kind"], c["mediation"]) for c in webauthn_calls(driver)[calls:]]


def test_an_old_session_adds_a_passkey_after_its_passkey_in_the_same_page(driver, server):
    email = unique_email("stale-two")
    driver.get(f"{server}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys("Grace Hopper")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-signup"))).click()
    at_path(driver, "/account")
    # A second authenticator for the new passkey (the first holds the account's passkey, which
    # the creation options exclude).
    from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

    second = VirtualAuthenticatorOptions()
    second.protocol = Protocol.CTAP2
    second.transport = Transport.USB
    second.has_resident_key = True
    second.has_user_verification = True
    second.is_user_verified = True
    driver.add_virtual_authenticator(second)
    age_sign_in(server, email)
    driver.find_element(By.ID, "add-passkey").click()
    prompt = reauthentication_prompt(driver)
    prompt.find_element(By.ID, "reauth-passkey").click()
    wait(driver).until(lambda d: len(passkey_names(d)) == 2)
    assert ("get", None) in [(c["kind"], c["mediation"]) for c in webauthn_calls(driver)]


def test_sign_out_everywhere_else_from_the_account_page(driver, server):
    import requests

    email = unique_email("everywhere")
    sign_up_with_password(driver, server, email)
    # Another device signs in to the same account.
    other = requests.Session()
    token = other.get(f"{server}/api/csrf", timeout=10).json()["csrf_token"]
    signed_in = other.post(f"{server}/api/signin/password", json={"email": email, "password": PASSWORD},
                           headers={"X-CSRF-Token": token}, timeout=10)
    assert signed_in.status_code == 200, signed_in.text
    assert other.get(f"{server}/api/account", timeout=10).status_code == 200
    driver.get(f"{server}/account")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#session-list li")) == 2
    driver.find_element(By.ID, "end-other-sessions").click()
    # The page reloads with the message: read the status by script, so that an element of the
    # page being replaced is never read.
    wait(driver).until(
        lambda d: "signed out" in d.execute_script("return document.getElementById('status')?.textContent || ''"))
    assert len(driver.find_elements(By.CSS_SELECTOR, "#session-list li")) == 1
    assert not driver.find_elements(By.ID, "end-other-sessions")
    assert other.get(f"{server}/api/account", timeout=10).status_code == 401
