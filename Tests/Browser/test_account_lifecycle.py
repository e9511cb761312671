"""The account's whole life in headless Chromium: deleting the account from /account through
the warning page (with the re-authentication the server asks for), the data download link, and
changing the address with the code mailed to the new one."""

import json
import re
import tempfile
import time
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_flows import wait
from conftest import run_sql
from test_pages import PASSWORD, age_sign_in, at_path, reauthentication_prompt, sign_up_with_password, unique_email


def accounts_with(server, email):
    return run_sql(server, f"SELECT count(*) FROM account_emails WHERE normalized_email = '{email}'").strip()


def test_delete_from_the_account_page_after_the_warning(driver, server):
    email = unique_email("delete")
    sign_up_with_password(driver, server, email)
    driver.find_element(By.ID, "delete-account").click()
    at_path(driver, "/account/delete")
    warning = driver.find_element(By.CSS_SELECTOR, "section.warning").text
    assert "cannot be undone" in warning and "passkeys" in warning

    # A wrong address deletes nothing and says why.
    field = driver.find_element(By.ID, "confirm_email")
    field.send_keys("someone@example.com")
    driver.find_element(By.ID, "delete-confirm").click()
    wait(driver).until(lambda d: "exactly" in d.find_element(By.ID, "status").text)
    assert field.get_attribute("aria-invalid") == "true"
    assert accounts_with(server, email) == "1"

    # An old sign-in: the page asks for the password first, then deletes.
    age_sign_in(server, email, minutes=60 * 24)
    field.clear()
    field.send_keys(email.upper())
    driver.find_element(By.ID, "delete-confirm").click()
    prompt = reauthentication_prompt(driver)
    assert accounts_with(server, email) == "1"
    prompt.find_element(By.ID, "reauth_password").send_keys(PASSWORD)
    prompt.find_element(By.CSS_SELECTOR, "#reauth-password-form button[type=submit]").click()
    at_path(driver, "/account/deleted")
    assert "deleted" in driver.find_element(By.TAG_NAME, "h1").text
    assert accounts_with(server, email) == "0"

    # The browser is signed out.
    driver.get(f"{server}/account")
    at_path(driver, "/signin")


def test_the_download_link_saves_the_account_data(driver, server):
    folder = tempfile.mkdtemp(prefix="account-export-")
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": folder})
    email = unique_email("export")
    sign_up_with_password(driver, server, email, name="Ada Export")
    link = wait(driver).until(EC.element_to_be_clickable((By.ID, "download-data")))
    assert link.get_attribute("download") == "account-data.json"
    link.click()
    deadline = time.time() + 20
    files = []
    while time.time() < deadline:
        files = [p for p in Path(folder).iterdir() if p.suffix == ".json"]
        if files:
            break
        time.sleep(0.2)
    assert files, "nothing was downloaded"
    document = json.loads(files[0].read_text())
    assert document["profile"]["email"] == email
    assert document["profile"]["display_name"] == "Ada Export"
    assert {"passkeys", "linked_identities", "connected_apps", "sessions", "security_events"} <= set(document)


def test_change_the_email_address_on_the_account_page(driver, server):
    email = unique_email("change")
    new = unique_email("changed")
    sign_up_with_password(driver, server, email)
    driver.find_element(By.ID, "new_email").send_keys(new)
    driver.find_element(By.CSS_SELECTOR, "#email-change-form button[type=submit]").click()
    pending = wait(driver).until(EC.visibility_of_element_located((By.ID, "pending-email-change")))
    assert new in pending.text
    # The account keeps its address until the code comes back.
    assert driver.find_element(By.ID, "account-email").text == email

    driver.get(f"{server}/dev/mail")
    text = driver.find_element(By.TAG_NAME, "body").text
    # Newest first: this browser's request is the first "new email address" message.
    code = re.search(r"confirm your new email address.*?\b(\d{6})\b", text, re.S).group(1)
    driver.get(f"{server}/account")
    driver.find_element(By.ID, "email_change_code").send_keys(code)
    driver.find_element(By.CSS_SELECTOR, "#email-change-confirm-form button[type=submit]").click()
    wait(driver).until(lambda d: d.find_element(By.ID, "account-email").text == new)
    assert "success" in driver.find_element(By.ID, "status").get_attribute("class")
    assert not driver.find_elements(By.ID, "pending-email-change")
