"""The WebAuthn Signal API (WebAuthn Level 3 §5.1.10) on the sign-in page, in headless Chromium:
after every passkey sign-in the page tells the passkey provider the account's current passkeys
(`signalAllAcceptedCredentials`) and its email and name (`signalCurrentUserDetails`); a passkey
the server does not hold is reported with `signalUnknownCredential`. The calls are recorded by a
script injected before the page's own (conftest.SIGNAL_RECORDER) and compared with the server's
own account and passkey list."""

import json
import uuid

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from browser_flows import NO_CONDITIONAL_UI, wait
from conftest import add_platform_authenticator, record_signals, recorded_signals, run_sql

PASSWORD = "correct horse battery staple"


def unique_email(label="signals"):
    return f"{label}-{uuid.uuid4().hex[:8]}@example.com"


def at_path(driver, path, seconds=20):
    wait(driver, seconds).until(lambda d: d.current_url.split("?")[0].endswith(path))


def b64url(text):
    return text.rstrip("=")


def page_json(driver, method, path, body=None):
    """Calls the JSON API from the page, as its own scripts do (session cookie, CSRF token)."""
    return driver.execute_async_script(
        """
        const [method, path, body, done] = arguments;
        fetch(path, {method, credentials: "same-origin", headers: {"Content-Type": "application/json",
          "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content},
          body: body === null ? undefined : JSON.stringify(body)})
          .then(async (r) => done({status: r.status, body: await r.text()}));
        """, method, path, body)


def server_truth(driver):
    """The signed-in account's user handle and passkey credential ids, as the server holds them."""
    account = json.loads(page_json(driver, "GET", "/api/account")["body"])
    passkeys = json.loads(page_json(driver, "GET", "/api/passkeys")["body"])["passkeys"]
    return account, sorted(p["credential_id"] for p in passkeys), passkeys


def passkey_count(driver):
    return driver.execute_script("return document.querySelectorAll('#passkey-list li').length")


def add_passkey(driver):
    before = passkey_count(driver)
    driver.find_element(By.ID, "add-passkey").click()
    wait(driver).until(lambda d: passkey_count(d) == before + 1)


def sign_up(driver, server, email, name):
    """A new account with a password, through the sign-up page; ends on /account."""
    driver.get(f"{server}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.ID, "password-signup").click()
    at_path(driver, "/account")


def sign_out(driver):
    """Signs out through the API (a sign-out landing on /signin could be signed straight back in
    by Chromium completing the conditional request), and forgets what was recorded so far."""
    wait(driver).until(lambda d: d.execute_script("return document.readyState") == "complete")
    assert page_json(driver, "POST", "/api/signout", {})["status"] in (200, 204)
    driver.execute_script("sessionStorage.clear()")


def modal_sign_in(driver, server):
    driver.get(f"{server}/signin")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-button"))).click()


def signed_in_signals(driver):
    """The two calls the sign-in page made after its passkey sign-in, by method."""
    calls = {c["method"]: c["options"] for c in recorded_signals(driver, "/signin")}
    assert set(calls) == {"signalAllAcceptedCredentials", "signalCurrentUserDetails"}, calls
    return calls["signalAllAcceptedCredentials"], calls["signalCurrentUserDetails"]


def test_every_passkey_sign_in_signals_the_accounts_current_passkeys_and_details(driver, server):
    record_signals(driver)
    email = unique_email()
    sign_up(driver, server, email, "Ada Lovelace")
    # Two passkeys in two authenticators: the first one's credential is kept aside.
    add_passkey(driver)
    first = driver.get_credentials()[0]
    driver.remove_virtual_authenticator()
    add_platform_authenticator(driver)
    add_passkey(driver)
    second = driver.get_credentials()[0]
    account, held, _ = server_truth(driver)
    assert held == sorted([b64url(first.id), b64url(second.id)])
    user_id = account["signal"]["userId"]
    assert user_id == b64url(second.user_handle)

    # Conditional sign-in (the email field's autofill).
    sign_out(driver)
    driver.get(f"{server}/signin?prompt=login")
    # The page's conditional request must be pending before the autofill is opened.
    wait(driver, 30).until(lambda d: d.current_url.split("?")[0].endswith("/account") or any(
        c["mediation"] == "conditional" for c in json.loads(
            d.execute_script("return sessionStorage.getItem('webauthn-calls') || '[]'"))))
    try:
        field = wait(driver).until(EC.element_to_be_clickable((By.ID, "email")))
        field.click()
        field.send_keys(Keys.ARROW_DOWN)
        field.send_keys(Keys.ENTER)
    except (StaleElementReferenceException, NoSuchElementException, WebDriverException):
        pass  # Chromium completed the conditional request by itself and is navigating away.
    at_path(driver, "/account")
    accepted, details = signed_in_signals(driver)
    assert accepted == {"rpId": "localhost", "userId": user_id, "allAcceptedCredentialIds": accepted["allAcceptedCredentialIds"]}
    assert sorted(accepted["allAcceptedCredentialIds"]) == held
    assert details == {"rpId": "localhost", "userId": user_id, "name": email, "displayName": "Ada Lovelace"}

    # Changed elsewhere (another step): the first passkey removed, the name edited. The next
    # modal sign-in signals the list and name as they are now.
    _, _, passkeys = server_truth(driver)
    first_id = next(p["id"] for p in passkeys if p["credential_id"] == b64url(first.id))
    assert page_json(driver, "DELETE", f"/api/passkeys/{first_id}")["status"] == 200
    assert page_json(driver, "PATCH", "/api/account", {"display_name": "Ada King"})["status"] == 200
    _, held_now, _ = server_truth(driver)
    assert held_now == [b64url(second.id)]
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI})
    sign_out(driver)
    modal_sign_in(driver, server)
    at_path(driver, "/account")
    accepted, details = signed_in_signals(driver)
    assert accepted == {"rpId": "localhost", "userId": user_id, "allAcceptedCredentialIds": held_now}
    assert details == {"rpId": "localhost", "userId": user_id, "name": email, "displayName": "Ada King"}


def test_a_passkey_the_server_does_not_hold_is_signalled_unknown(driver, server):
    record_signals(driver)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI})
    driver.get(f"{server}/signup")
    driver.find_element(By.ID, "email").send_keys(unique_email("unknown"))
    driver.find_element(By.ID, "display_name").send_keys("Grace Hopper")
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.ID, "password-signup").click()
    at_path(driver, "/account")
    add_passkey(driver)
    credential = driver.get_credentials()[0]
    sign_out(driver)
    # The server forgets the passkey (deleted from another device, say); the authenticator keeps it.
    raw = credential.id
    run_sql(server, f"DELETE FROM passkey_credentials WHERE credential_id = decode('{bytes_hex(raw)}', 'hex')")

    modal_sign_in(driver, server)
    wait(driver).until(lambda d: recorded_signals(d, "/signin"))
    assert recorded_signals(driver, "/signin") == [{
        "method": "signalUnknownCredential",
        "options": {"rpId": "localhost", "credentialId": b64url(credential.id)},
        "path": "/signin",
    }]
    assert driver.current_url.split("?")[0].endswith("/signin")
    assert driver.find_element(By.ID, "status").text


def bytes_hex(b64):
    import base64

    return base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()


def test_a_throwing_signal_never_fails_the_sign_in(driver, server):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI + """
        PublicKeyCredential.signalAllAcceptedCredentials = () => { throw new TypeError("provider refused"); };
        PublicKeyCredential.signalCurrentUserDetails = () => new Promise(() => {});
    """})
    email = unique_email("throwing")
    sign_up(driver, server, email, "Alan Turing")
    add_passkey(driver)
    sign_out(driver)
    modal_sign_in(driver, server)
    at_path(driver, "/account")
    assert email in driver.find_element(By.ID, "account-email").text


def test_a_passkey_re_authentication_on_the_account_page_signals_too(driver, server):
    record_signals(driver)
    email = unique_email("reauth")
    sign_up(driver, server, email, "Katherine Johnson")
    add_passkey(driver)
    account, held, passkeys = server_truth(driver)
    driver.execute_script("sessionStorage.clear()")
    # An old sign-in: deleting the passkey asks for a re-authentication first.
    run_sql(server, f"""UPDATE authentication_sessions SET auth_time = auth_time - interval '10 minutes'
                        WHERE account_id = (SELECT account_id FROM account_emails WHERE normalized_email = '{email}')""")
    driver.find_element(By.CSS_SELECTOR, f"#passkey-list li button.delete[data-id='{passkeys[0]['id']}']").click()
    wait(driver).until(EC.alert_is_present()).accept()
    wait(driver).until(EC.visibility_of_element_located((By.ID, "reauthenticate")))
    driver.find_element(By.ID, "reauth-passkey").click()
    wait(driver).until(lambda d: d.find_elements(By.ID, "no-passkeys"))
    calls = [(c["method"], c["options"]) for c in recorded_signals(driver, "/account")]
    user_id = account["signal"]["userId"]
    # The re-authentication's two calls (the list as it was), then the removal's own.
    assert calls == [
        ("signalAllAcceptedCredentials", {"rpId": "localhost", "userId": user_id, "allAcceptedCredentialIds": held}),
        ("signalCurrentUserDetails",
         {"rpId": "localhost", "userId": user_id, "name": email, "displayName": "Katherine Johnson"}),
        ("signalAllAcceptedCredentials", {"rpId": "localhost", "userId": user_id, "allAcceptedCredentialIds": []}),
    ]
