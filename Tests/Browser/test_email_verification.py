"""The account page's email verification prompt, in headless Chromium: the code form and the
resend button answer through the JSON API in the page's language."""

import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

PASSWORD = "correct horse battery staple"


def wait(driver, seconds=15):
    return WebDriverWait(driver, seconds)


def status_text(driver):
    return driver.execute_script("return document.getElementById('status').textContent")


def sign_up(driver, server, language):
    driver.get(f"{server}/signup?ui_locales={language}")
    driver.find_element(By.ID, "email").send_keys(f"verify-{uuid.uuid4().hex[:8]}@example.com")
    driver.find_element(By.ID, "display_name").send_keys("Ada Lovelace")
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.ID, "password-signup").click()
    wait(driver).until(lambda d: d.current_url.split("?")[0].endswith("/account"))


def test_a_wrong_code_and_an_early_resend_are_explained_on_the_page(driver, server, artifacts):
    sign_up(driver, server, "en")
    section = driver.find_element(By.ID, "email-verification")
    assert "Confirm your email address" in section.text
    driver.save_screenshot(str(artifacts / "account-unverified-en.png"))

    # Never a code (codes are six digits), so always wrong, whatever code was sent.
    driver.find_element(By.ID, "verification-code").send_keys("12345x")
    driver.find_element(By.CSS_SELECTOR, "#email-verify-form button").click()
    wait(driver).until(lambda d: status_text(d) == section.get_attribute("data-invalid-code"))
    assert status_text(driver) == "This code is not correct. Check the message and try again."

    driver.find_element(By.CSS_SELECTOR, "#email-resend-form button").click()
    wait(driver).until(lambda d: status_text(d) == section.get_attribute("data-too-soon"))


def test_the_prompt_speaks_japanese(driver, server, artifacts):
    sign_up(driver, server, "ja")
    driver.get(f"{server}/account?ui_locales=ja")
    section = driver.find_element(By.ID, "email-verification")
    assert "メールアドレスを確認してください" in section.text
    driver.find_element(By.ID, "verification-code").send_keys("12")
    driver.find_element(By.CSS_SELECTOR, "#email-verify-form button").click()
    wait(driver).until(lambda d: status_text(d) == "コードが正しくありません。メールを確認してもう一度入力してください。")
    driver.save_screenshot(str(artifacts / "account-unverified-ja.png"))
