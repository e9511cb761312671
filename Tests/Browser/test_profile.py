"""The account page's profile form in headless Chromium: the fields save together, a refused
value shows its own message under its field, and the stored values come back on reload."""

from selenium.webdriver.common.by import By

from browser_flows import wait
from test_pages import sign_up_with_password, unique_email


def fill(driver, field, value):
    element = driver.find_element(By.ID, field)
    element.clear()
    element.send_keys(value)


def save(driver):
    driver.find_element(By.CSS_SELECTOR, "#profile-form button[type=submit]").click()


def test_profile_form_saves_shows_field_errors_and_keeps_values(driver, server):
    sign_up_with_password(driver, server, unique_email("profile"))
    assert driver.find_element(By.ID, "given_name").get_attribute("autocomplete") == "given-name"
    assert driver.find_element(By.ID, "locale").get_attribute("autocomplete") == "language"
    assert driver.find_element(By.ID, "picture").get_attribute("autocomplete") == "photo"

    fill(driver, "given_name", "Ada")
    fill(driver, "family_name", "Lovelace")
    fill(driver, "locale", "en_GB")
    save(driver)
    error = driver.find_element(By.ID, "locale-error")
    wait(driver).until(lambda d: error.is_displayed())
    assert driver.find_element(By.ID, "locale").get_attribute("aria-invalid") is not None
    assert error.text in driver.find_element(By.ID, "status").text
    assert not driver.find_element(By.ID, "given_name-error").is_displayed()

    fill(driver, "locale", "en-gb")
    fill(driver, "picture", "https://example.com/ada.png")
    save(driver)
    wait(driver).until(lambda d: "success" in d.find_element(By.ID, "status").get_attribute("class"))
    assert not error.is_displayed()
    assert driver.find_element(By.ID, "locale").get_attribute("value") == "en-GB"

    driver.refresh()
    assert driver.find_element(By.ID, "given_name").get_attribute("value") == "Ada"
    assert driver.find_element(By.ID, "family_name").get_attribute("value") == "Lovelace"
    assert driver.find_element(By.ID, "locale").get_attribute("value") == "en-GB"
    assert driver.find_element(By.ID, "picture").get_attribute("value") == "https://example.com/ada.png"
