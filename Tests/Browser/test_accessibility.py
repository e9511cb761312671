"""Accessibility of every page state (WCAG 2.1 AA), in headless Chromium, in English and
Japanese, in the light and the dark colour scheme:

- axe-core (bundled by selenium-axe-python) finds no violation of any impact;
- the focus ring of every control is at least 3:1 against the background around it, and every
  text input's border at least 3:1 against the field and around it (SC 1.4.11);
- at 320 CSS pixels nothing scrolls sideways (SC 1.4.10);
- sign-up and sign-in work with the keyboard alone (SC 2.1.1);
- a wrong password marks the fields in error and points them at the message, the next try
  clears that, and a refused sign-up moves focus to the message (SC 3.3.1);
- a Japanese error page has no English sentence, and its raw error code is marked `lang="en"`
  (SC 3.1.2)."""

import html
import os
import re
import secrets
import shutil
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium_axe_python import Axe

from browser_flows import RelyingParty, wait
from conftest import DATA_DIRS, ROOT, free_port, run_sql, serve

PASSWORD = "correct horse battery staple"
LANGUAGES = ("en", "ja")
SCHEMES = ("light", "dark")
# WCAG 2.1 A and AA, and axe's best practices (landmarks, headings, regions).
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
               "resultTypes": ["violations"]}

# The colour of a CSS value as (r, g, b, alpha) in 0…1, for the two forms Chromium computes.
COLOUR_FUNCTIONS = """
const parseColour = (value) => {
  let m = value.match(/^rgba?\\(([\\d.]+),\\s*([\\d.]+),\\s*([\\d.]+)(?:,\\s*([\\d.]+))?\\)$/);
  if (m) return [m[1] / 255, m[2] / 255, m[3] / 255, m[4] === undefined ? 1 : Number(m[4])];
  m = value.match(/^color\\(srgb ([\\d.]+) ([\\d.]+) ([\\d.]+)(?: \\/ ([\\d.]+))?\\)$/);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])];
  throw new Error("unparsed colour " + value);
};
const luminance = ([r, g, b]) => {
  const linear = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
};
const contrast = (a, b) => {
  const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (l1 + 0.05) / (l2 + 0.05);
};
// A colour with alpha over an opaque one.
const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
// The opaque background an element is drawn on: its ancestors' backgrounds, composed.
const backgroundBehind = (element) => {
  const layers = [];
  for (let e = element; e; e = e.parentElement) {
    const colour = parseColour(getComputedStyle(e).backgroundColor);
    if (colour[3] > 0) layers.push(colour);
    if (colour[3] === 1) break;
  }
  let result = [1, 1, 1, 1];
  if (!layers.length || layers[layers.length - 1][3] < 1) {
    // The canvas: the root's colour scheme decides it.
    result = matchMedia("(prefers-color-scheme: dark)").matches ? [0, 0, 0, 1] : [1, 1, 1, 1];
  }
  for (const layer of layers.reverse()) result = over(layer, result);
  return result;
};
"""

# The focused element's outline against the background it is drawn on (outside the element).
FOCUS_RING = COLOUR_FUNCTIONS + """
const element = document.activeElement;
if (!element || element === document.body) return null;
const style = getComputedStyle(element);
const label = element.id || element.getAttribute("name") || element.textContent.trim().slice(0, 30) || element.tagName;
if (style.outlineStyle === "none" || parseFloat(style.outlineWidth) < 2) {
  return {label, ratio: 0, why: "no outline " + style.outlineStyle + " " + style.outlineWidth};
}
const around = backgroundBehind(element.parentElement);
const ring = over(parseColour(style.outlineColor), around);
return {label, ratio: contrast(ring, around), why: style.outlineColor};
"""

# Every visible text field's border against the field's own background and the one around it.
FIELD_BORDERS = COLOUR_FUNCTIONS + """
const fields = [...document.querySelectorAll("input:not([type=hidden]):not([type=checkbox]):not([type=radio])")]
  .filter((e) => e.getClientRects().length);
return fields.map((field) => {
  const style = getComputedStyle(field);
  const inside = backgroundBehind(field);
  const outside = backgroundBehind(field.parentElement);
  const border = over(parseColour(style.borderTopColor), outside);
  return {label: field.id || field.name, ratio: Math.min(contrast(border, inside), contrast(border, outside))};
});
"""


@pytest.fixture(scope="module")
def rp():
    relying_party = RelyingParty()
    yield relying_party
    relying_party.server.shutdown()


@pytest.fixture(scope="module")
def site(rp):
    """A server with one third-party client, so that /authorize shows the consent page."""
    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix="auth-server-browser-a11y-")
    os.chmod(data_dir, 0o755)
    try:
        with serve({
            "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(data_dir) / "var"),
            "public_dir": str(ROOT / "public"), "webauthn": {"rp_name": "Example ID"},
            "clients": [{
                "client_id": "a11y-shop", "client_name": "Example Shop", "redirect_uris": [f"{rp.base}/callback"],
                "token_endpoint_auth_method": "none", "grant_types": ["authorization_code"],
                "scope": "openid profile email",
            }],
        }, data_dir):
            DATA_DIRS[base] = data_dir
            yield base
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def mailed_recovery_code(site, email, seconds=15):
    """The newest eight-digit code mailed to `email`, from the development mailbox."""
    pattern = re.compile(r'<article class="mail" data-to="([^"]*)">.*?<pre class="text">([^<]*)</pre>', re.S)
    deadline = time.time() + seconds
    while time.time() < deadline:
        with urllib.request.urlopen(f"{site}/dev/mail", timeout=10) as response:
            page = response.read().decode()
        for to, text in pattern.findall(page):
            code = re.search(r"\b\d{8}\b", html.unescape(text))
            if html.unescape(to) == email and code:
                return code.group(0)
        time.sleep(0.2)
    raise AssertionError(f"no code mailed to {email}")


def speak(driver, language):
    """Makes the browser ask for `language` (Accept-Language) on every request."""
    user_agent = driver.execute_script("return navigator.userAgent")
    driver.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": user_agent, "acceptLanguage": language})


def scheme(driver, name):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": name}]})
    assert driver.execute_script(f"return matchMedia('(prefers-color-scheme: {name})').matches")


def at_path(driver, path, seconds=20):
    wait(driver, seconds).until(lambda d: urllib.parse.urlparse(d.current_url).path == path)


def page_is(driver, name):
    """Read in one script call: a navigation may replace the document at any time."""
    return driver.execute_script("return document.body?.dataset.page") == name


def status_text(driver):
    return driver.execute_script("return document.getElementById('status')?.textContent.trim()")


def keys(driver, *sequence):
    """Presses keys on whatever has focus: no element is clicked."""
    ActionChains(driver).send_keys(*sequence).perform()


def tab_to(driver, element_id, limit=30):
    for _ in range(limit):
        keys(driver, Keys.TAB)
        if driver.switch_to.active_element.get_attribute("id") == element_id:
            return
    raise AssertionError(f"#{element_id} cannot be reached with Tab")


def focus_rings(driver, state, failures, limit=60):
    """Tabs through the page (from the top) in both schemes, measuring the focus ring of each control."""
    for name in SCHEMES:
        scheme(driver, name)
        driver.execute_script("document.activeElement?.blur(); window.getSelection()?.removeAllRanges()")
        seen = set()
        for _ in range(limit):
            keys(driver, Keys.TAB)
            ring = driver.execute_script(FOCUS_RING)
            if ring is None or ring["label"] in seen:
                break
            seen.add(ring["label"])
            if ring["ratio"] < 3:
                failures.append(
                    f"{state} [{name}]: focus ring of {ring['label']!r} {ring['ratio']:.2f}:1 ({ring['why']})")
        if not seen:
            failures.append(f"{state} [{name}]: Tab reaches no control")


def audit(driver, state, language, failures):
    """axe, focus rings and field borders in both schemes, and reflow at 320 px, of the page as it is now."""
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == language, state
    axe = Axe(driver)
    for name in SCHEMES:
        scheme(driver, name)
        if not driver.execute_script("return typeof axe === 'object'"):
            axe.inject()
        results = axe.run(options=AXE_OPTIONS)
        for violation in results["violations"]:
            targets = [node["target"] for node in violation["nodes"]]
            failures.append(f"{state} [{name}]: {violation['id']} ({violation['impact']}): {violation['help']} {targets}")
        for field in driver.execute_script(FIELD_BORDERS):
            if field["ratio"] < 3:
                failures.append(f"{state} [{name}]: border of #{field['label']} {field['ratio']:.2f}:1")
    focus_rings(driver, state, failures)
    reflow(driver, state, failures)


def reflow(driver, state, failures):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 320, "height": 640, "deviceScaleFactor": 1, "mobile": False})
    try:
        wait(driver, 5).until(lambda d: d.execute_script("return window.innerWidth") == 320)
        width = driver.execute_script("return document.documentElement.scrollWidth")
        if width > 320:
            widest = driver.execute_script("""
              return [...document.querySelectorAll('body *')].map(e => [e.getBoundingClientRect().right, e])
                .filter(([right]) => right > innerWidth).map(([right, e]) =>
                  `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className ? '.' + e.className : ''} ends at ${Math.round(right)}`)
                .slice(0, 3)""")
            failures.append(f"{state}: scrolls sideways at 320 px (scrollWidth {width}): {widest}")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def sign_up(driver, site, email, language):
    driver.get(f"{site}/signup?ui_locales={language}")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys("Ada Lovelace")
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.ID, "password").send_keys(Keys.ENTER)
    at_path(driver, "/account")


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_state_passes_axe_focus_contrast_and_reflow(driver, site, rp, language, artifacts):
    speak(driver, language)
    failures = []
    email = f"a11y-{uuid.uuid4().hex[:8]}@example.com"

    driver.get(f"{site}/signin")
    audit(driver, "sign-in", language, failures)

    driver.find_element(By.ID, "email").send_keys(f"nobody-{uuid.uuid4().hex[:8]}@example.com")
    driver.find_element(By.ID, "password").send_keys("wrong password", Keys.ENTER)
    wait(driver).until(status_text)
    audit(driver, "sign-in with error", language, failures)

    driver.get(f"{site}/signup")
    audit(driver, "sign-up", language, failures)

    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys("Ada Lovelace")
    driver.find_element(By.ID, "password").send_keys("short", Keys.ENTER)
    wait(driver).until(status_text)
    audit(driver, "sign-up refused", language, failures)

    driver.get(f"{site}/recover")
    audit(driver, "recovery: email", language, failures)
    driver.find_element(By.ID, "email").send_keys(f"nobody-{uuid.uuid4().hex[:8]}@example.com", Keys.ENTER)
    wait(driver).until(EC.visibility_of_element_located((By.ID, "code"))).send_keys("12345678", Keys.ENTER)
    wait(driver).until(status_text)
    audit(driver, "recovery: wrong code", language, failures)

    driver.get(f"{site}/verify-email?token={secrets.token_urlsafe(16)}")
    audit(driver, "email verification link refused", language, failures)

    driver.get(f"{site}/authorize?client_id=unknown-app&response_type=code")
    audit(driver, "error page", language, failures)

    sign_up(driver, site, email, language)
    audit(driver, "account", language, failures)
    driver.save_screenshot(str(artifacts / f"a11y-account-{language}.png"))

    driver.find_element(By.ID, "verification-code").send_keys("12345x", Keys.ENTER)
    wait(driver).until(status_text)
    audit(driver, "account: wrong email code", language, failures)

    driver.get(f"{site}/account/apps")
    audit(driver, "connected apps", language, failures)

    driver.get(f"{site}/authorize?" + urllib.parse.urlencode({
        "response_type": "code", "client_id": "a11y-shop", "redirect_uri": f"{rp.base}/callback",
        "scope": "openid email profile", "state": "s", "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256"}))
    wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "form[action='/authorize/consent']")))
    audit(driver, "consent", language, failures)

    driver.get(f"{site}/logout")
    wait(driver).until(EC.presence_of_element_located((By.ID, "logout-form")))
    audit(driver, "logout confirmation", language, failures)
    driver.find_element(By.ID, "logout-cancel").send_keys(Keys.ENTER)
    wait(driver).until(lambda d: page_is(d, "logout-cancelled"))
    audit(driver, "still signed in", language, failures)

    driver.get(f"{site}/logout")
    wait(driver).until(EC.presence_of_element_located((By.ID, "logout-confirm"))).send_keys(Keys.ENTER)
    wait(driver).until(lambda d: page_is(d, "signed-out"))
    audit(driver, "signed out", language, failures)

    # Recovery of the account, to the end.
    run_sql(site, f"UPDATE account_emails SET verified_at = now() WHERE normalized_email = '{email}'")
    driver.get(f"{site}/recover")
    driver.find_element(By.ID, "email").send_keys(email, Keys.ENTER)
    code = wait(driver).until(EC.visibility_of_element_located((By.ID, "code")))
    code.send_keys(mailed_recovery_code(site, email), Keys.ENTER)
    wait(driver).until(EC.visibility_of_element_located((By.ID, "new_password")))
    audit(driver, "recovery: choose", language, failures)
    driver.find_element(By.ID, "new_password").send_keys(PASSWORD + " again", Keys.ENTER)
    wait(driver).until(EC.visibility_of_element_located((By.ID, "recover-continue")))
    audit(driver, "recovery: done", language, failures)

    assert not failures, "\n".join(failures)


def test_japanese_error_page_has_no_english_sentence(driver, site):
    driver.get(f"{site}/authorize?client_id=unknown-app&response_type=code&ui_locales=ja")
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ja"
    main = driver.find_element(By.TAG_NAME, "main")
    code = driver.find_element(By.ID, "error-code")
    assert code.text == "invalid_client" and code.get_attribute("lang") == "en"
    message = driver.find_element(By.CSS_SELECTOR, "[role=alert]").text
    assert message == "アプリケーションを確認できませんでした。このアプリケーションは登録されていません。"
    # Outside the code marked English, no run of Latin words (a sentence) is left.
    text = driver.execute_script(
        "const main = document.querySelector('main').cloneNode(true);"
        "main.querySelectorAll('[lang=en]').forEach((e) => e.remove()); return main.textContent")
    assert not re.search(r"[A-Za-z]+ [A-Za-z]+", text), text
    assert "Client authentication failed" not in main.text


def test_wrong_password_marks_the_fields_and_the_next_try_clears_them(driver, site):
    driver.get(f"{site}/signin")
    email = driver.find_element(By.ID, "email")
    password = driver.find_element(By.ID, "password")
    assert email.get_attribute("aria-invalid") is None
    email.send_keys(f"nobody-{uuid.uuid4().hex[:8]}@example.com")
    password.send_keys("wrong password", Keys.ENTER)
    wait(driver).until(status_text)
    for field in (email, password):
        wait(driver).until(lambda d: field.get_attribute("aria-invalid") == "true")
        assert "status" in field.get_attribute("aria-describedby").split()
    # The next try: while it is on its way, the fields are no longer marked.
    driver.execute_script("window.fetch = () => new Promise(() => {})")
    password.send_keys(Keys.ENTER)
    wait(driver).until(lambda d: d.find_element(By.CSS_SELECTOR, "#password-form button[type=submit]")
                       .get_attribute("disabled"))
    for field in (email, password):
        assert field.get_attribute("aria-invalid") is None
        assert "status" not in (field.get_attribute("aria-describedby") or "").split()


def test_a_refused_sign_up_moves_focus_to_the_error(driver, site):
    # Without script (the form posts): the page comes back with the reason focused.
    driver.get(f"{site}/signup")
    driver.find_element(By.ID, "email").send_keys(f"weak-{uuid.uuid4().hex[:8]}@example.com")
    driver.find_element(By.ID, "display_name").send_keys("Ada Lovelace")
    driver.find_element(By.ID, "password").send_keys("short", Keys.ENTER)
    wait(driver).until(status_text)
    wait(driver).until(lambda d: d.switch_to.active_element.get_attribute("id") == "status")
    password = driver.find_element(By.ID, "password")
    assert password.get_attribute("aria-invalid") == "true"
    assert password.get_attribute("aria-describedby").split() == ["status", "password-hint"]

    # With a passkey the browser refused: the script moves focus to the message.
    driver.get(f"{site}/signup")
    driver.find_element(By.ID, "email").send_keys(f"refused-{uuid.uuid4().hex[:8]}@example.com")
    driver.find_element(By.ID, "display_name").send_keys("Ada Lovelace")
    driver.execute_script(
        "navigator.credentials.create = () => Promise.reject(new DOMException('refused', 'NotAllowedError'))")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-signup"))).send_keys(Keys.ENTER)
    wait(driver).until(status_text)
    wait(driver).until(lambda d: d.switch_to.active_element.get_attribute("id") == "status")


def test_sign_up_and_sign_in_with_the_keyboard_alone(driver, site):
    email = f"keys-{uuid.uuid4().hex[:8]}@example.com"
    driver.get(f"{site}/signup")
    tab_to(driver, "email")
    keys(driver, email)
    tab_to(driver, "display_name")
    keys(driver, "Ada Lovelace")
    tab_to(driver, "password")
    keys(driver, PASSWORD, Keys.ENTER)
    at_path(driver, "/account")

    # Sign out: Tab to the button, Enter.
    for _ in range(40):
        keys(driver, Keys.TAB)
        if driver.execute_script("return document.activeElement.closest('#signout-form') !== null"):
            break
    else:
        raise AssertionError("the sign-out button cannot be reached with Tab")
    keys(driver, Keys.ENTER)
    at_path(driver, "/signin")

    # A wrong password, then the right one, never leaving the keyboard.
    tab_to(driver, "email")
    keys(driver, email)
    tab_to(driver, "password")
    keys(driver, "wrong password", Keys.ENTER)
    wait(driver).until(status_text)
    # The page gives focus back to the password, selected, for the next try.
    wait(driver).until(lambda d: d.switch_to.active_element.get_attribute("id") == "password")
    keys(driver, PASSWORD, Keys.ENTER)
    at_path(driver, "/account")
    assert email in driver.find_element(By.ID, "account-email").text


def test_an_api_error_without_a_sentence_of_its_own_is_not_shown_in_english(driver, site):
    """A refusal the pages have no sentence for (here a passkey answer to an unknown challenge)
    reads in the page's language, not the API's English."""
    driver.get(f"{site}/signin?ui_locales=ja")
    script = """
      const done = arguments[arguments.length - 1];
      import("/static/js/webauthn.js").then((m) =>
        m.api("POST", "/api/passkeys/authentication/finish", {challenge_id: "unknown", credential: {}})
          .then(() => done({ok: true}), (error) => done({code: error.code, api: error.message, shown: m.errorText(error)})));
    """
    answer = driver.execute_async_script(script)
    assert answer.get("code") and answer["code"] not in ("csrf_failed", "unknown_credential"), answer
    assert answer["shown"] == driver.find_element(By.ID, "messages").get_attribute("data-request-failed")
    assert answer["shown"] != answer["api"] and not re.search(r"[A-Za-z]+ [A-Za-z]+", answer["shown"]), answer
