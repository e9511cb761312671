"""Account recovery in headless Chromium: a passkey account loses its passkey, recovers with a
code read from the development mailbox, registers a new passkey and signs in with it."""

import html
import re
import time
import urllib.request
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from browser_flows import NO_CONDITIONAL_UI, wait
from conftest import run_sql
from test_pages import at_path


def passkey_count(driver):
    return driver.execute_script("return document.querySelectorAll('#passkey-list .passkey-name').length")


def mailed_code(server, email, seconds=15):
    """The newest code mailed to `email`, from /dev/mail (articles are newest first)."""
    pattern = re.compile(
        r'<article class="mail" data-to="([^"]*)"><h2 class="subject">([^<]*)</h2><pre class="text">([^<]*)</pre>')
    deadline = time.time() + seconds
    while time.time() < deadline:
        with urllib.request.urlopen(f"{server}/dev/mail", timeout=10) as response:
            page = response.read().decode()
        for to, subject, text in pattern.findall(page):
            code = re.search(r"\b\d{8}\b", html.unescape(text))
            if html.unescape(to) == email and "recover" in html.unescape(subject) and code:
                return code.group(0)
        time.sleep(0.2)
    raise AssertionError(f"no code mailed to {email}")


def test_recover_a_lost_passkey_with_a_mailed_code(driver, server):
    email = f"lost-{uuid.uuid4().hex[:8]}@example.com"
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI})
    driver.get(f"{server}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys("Grace Hopper")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-signup"))).click()
    at_path(driver, "/account")
    run_sql(server, f"UPDATE account_emails SET verified_at = now() WHERE normalized_email = '{email}'")
    driver.find_element(By.CSS_SELECTOR, "#signout-form button").click()
    at_path(driver, "/signin")

    # The passkey is gone (a lost phone).
    driver.remove_all_credentials()
    assert driver.get_credentials() == []

    wait(driver).until(EC.element_to_be_clickable((By.ID, "recover-link"))).click()
    at_path(driver, "/recover")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "#recover-start-form button[type=submit]").click()
    wait(driver).until(EC.visibility_of_element_located((By.ID, "code"))).send_keys(mailed_code(server, email))
    driver.find_element(By.CSS_SELECTOR, "#recover-verify-form button[type=submit]").click()
    wait(driver).until(EC.element_to_be_clickable((By.ID, "recover-passkey"))).click()
    wait(driver).until(EC.element_to_be_clickable((By.ID, "end-other-sessions"))).click()
    wait(driver).until(lambda d: d.find_element(By.ID, "status").text)
    assert len(driver.get_credentials()) == 1
    driver.find_element(By.ID, "recover-continue").click()
    at_path(driver, "/account")
    assert email in driver.find_element(By.ID, "account-email").text
    assert passkey_count(driver) == 2  # the lost one (until removed) and the new one

    driver.find_element(By.CSS_SELECTOR, "#signout-form button").click()
    at_path(driver, "/signin")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-button"))).click()
    at_path(driver, "/account")
    assert email in driver.find_element(By.ID, "account-email").text


def test_recovery_page_in_both_languages(driver, server, artifacts):
    for language, title in (("en", "Recover your account"), ("ja", "アカウントの復旧")):
        driver.get(f"{server}/recover?ui_locales={language}")
        assert driver.find_element(By.TAG_NAME, "h1").text == title
        assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == language
        driver.find_element(By.ID, "email").send_keys(f"nobody-{uuid.uuid4().hex[:8]}@example.com")
        driver.find_element(By.CSS_SELECTOR, "#recover-start-form button[type=submit]").click()
        wait(driver).until(EC.visibility_of_element_located((By.ID, "code"))).send_keys("12345678")
        driver.find_element(By.CSS_SELECTOR, "#recover-verify-form button[type=submit]").click()
        expected = "無効" if language == "ja" else "not valid"
        wait(driver).until(lambda d: expected in d.find_element(By.ID, "status").text)
        driver.save_screenshot(str(artifacts / f"recover-{language}.png"))
