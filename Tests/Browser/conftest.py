"""Fixtures for the browser tests: a real `auth-server serve` on an ephemeral port with its
embedded PostgreSQL in a temporary data_dir, and headless Chromium with a WebDriver virtual
authenticator (CTAP2, internal transport, resident keys, user verification)."""

import json
import os
import shutil
import tempfile
import sys
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pysupport"))
from auth_server import ROOT, binary, free_port, psql, serve  # noqa: E402  (re-exported to the tests)

ARTIFACTS = ROOT / "test-artifacts"

# Records every WebAuthn request a page makes, in sessionStorage so that it survives the
# navigation that follows a sign-in.
RECORDER = """
(() => {
  const record = (kind, options) => {
    const list = JSON.parse(sessionStorage.getItem("webauthn-calls") || "[]");
    list.push({ kind, mediation: options?.mediation ?? null, at: Date.now() });
    sessionStorage.setItem("webauthn-calls", JSON.stringify(list));
  };
  const create = navigator.credentials.create.bind(navigator.credentials);
  const get = navigator.credentials.get.bind(navigator.credentials);
  navigator.credentials.create = (options) => { record("create", options); return create(options); };
  navigator.credentials.get = (options) => { record("get", options); return get(options); };
})();
"""

# Replaces the WebAuthn Signal API (WebAuthn Level 3 §5.1.10) with recorders, before the
# page's own scripts run: each call's method, argument and page path go to `window.__signals`
# and to sessionStorage (which survives the navigation that follows a sign-in).
SIGNAL_RECORDER = """
(() => {
  if (typeof window.PublicKeyCredential !== "function") return;
  const load = () => JSON.parse(sessionStorage.getItem("webauthn-signals") || "[]");
  window.__signals = load();
  for (const method of ["signalUnknownCredential", "signalAllAcceptedCredentials", "signalCurrentUserDetails"]) {
    PublicKeyCredential[method] = async (options) => {
      const entry = { method, options: JSON.parse(JSON.stringify(options)), path: location.pathname };
      window.__signals.push(entry);
      const list = load();
      list.push(entry);
      sessionStorage.setItem("webauthn-signals", JSON.stringify(list));
    };
  }
})();
"""


def record_signals(driver):
    """Makes every page the driver opens from now on record its Signal API calls."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SIGNAL_RECORDER})


def recorded_signals(driver, path=None):
    """The Signal API calls recorded in this origin's tab, optionally only those made on `path`."""
    calls = json.loads(driver.execute_script("return sessionStorage.getItem('webauthn-signals') || '[]'"))
    return [c for c in calls if path is None or c["path"] == path]


# The data_dir of each running server, by its base URL (for `run_sql`).
DATA_DIRS = {}


def run_sql(server, sql):
    """Runs SQL on the server's embedded PostgreSQL, for the set-up steps that have no page,
    such as marking an address verified."""
    return psql(DATA_DIRS[server], sql)

@pytest.fixture(scope="session")
def server():
    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix="auth-server-browser-")
    os.chmod(data_dir, 0o755)  # the embedded cluster may run as the postgres user
    try:
        with serve({
            "issuer": base,
            "listen": f"127.0.0.1:{port}",
            "data_dir": str(Path(data_dir) / "var"),
            "public_dir": str(ROOT / "public"),
            "webauthn": {"rp_name": "Example ID"},
            "clients": [],
        }, data_dir):
            DATA_DIRS[base] = data_dir
            yield base
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def driver():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,1000",
                     "--disable-gpu", "--lang=en-US"):
        options.add_argument(argument)
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    browser = webdriver.Chrome(options=options, service=service)
    browser.implicitly_wait(0)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    add_platform_authenticator(browser)
    yield browser
    browser.quit()


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def add_platform_authenticator(driver):
    """A platform passkey provider for `driver` (CTAP2, internal transport): discoverable
    credentials, user verification that succeeds, user presence given."""
    authenticator = VirtualAuthenticatorOptions()
    authenticator.protocol = Protocol.CTAP2
    authenticator.transport = Transport.INTERNAL
    authenticator.has_resident_key = True
    authenticator.has_user_verification = True
    authenticator.is_user_verified = True
    authenticator.is_user_consenting = True
    driver.add_virtual_authenticator(authenticator)
