"""Browser steps shared by Tests/Browser and Tests/Reliability: a relying party's callback
server, a server with that relying party as its client, passkey sign-up, and the start of a
code flow with PKCE that signs in with a passkey."""

import base64
import contextlib
import hashlib
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import urllib.parse
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

# Makes the sign-in page use the passkey button instead of the autofill (conditional) request.
NO_CONDITIONAL_UI = "PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);"


@contextlib.contextmanager
def server_with_client(rp, client, secret, prefix):
    """`auth-server serve` in a temporary folder with one confidential web client for `rp`
    (`client` adds to or overrides its metadata; `secret` is its client secret); yields the
    issuer."""
    from auth_server import ROOT, binary, free_port, serve

    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix=prefix)
    os.chmod(data_dir, 0o755)  # the embedded cluster may run as the postgres user
    secret_hash = subprocess.run([binary(), "clients", "hash-secret"], input=secret + "\n", capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[-1].split(": ", 1)[1]
    try:
        with serve({
            "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(Path(data_dir) / "var"),
            "public_dir": str(ROOT / "public"), "webauthn": {"rp_name": "Example ID"},
            "clients": [{
                "client_name": "Example Shop", "redirect_uris": [f"{rp.base}/callback"],
                "token_endpoint_auth_method": "client_secret_basic", "client_secret_hash": secret_hash,
                "grant_types": ["authorization_code"], "scope": "openid profile email",
            } | client],
        }, data_dir):
            yield base
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def wait(driver, seconds=20):
    """Waits for a condition; an element replaced while it is read (a page re-rendering, or the
    navigation a form starts) is read again on the next poll rather than failing the test.
    Chromium reports a node detached mid-read either as a stale element or, when the navigation
    wins the race inside the driver, as an "unknown error" (`Node with given id does not belong
    to the document`), which Selenium raises as a bare WebDriverException; both are retried.
    A condition that never holds still times out."""
    return WebDriverWait(driver, seconds, ignored_exceptions=(StaleElementReferenceException, WebDriverException))


class RelyingParty:
    """The client's web server on 127.0.0.1: records the requests (callbacks) it receives."""

    def __init__(self):
        self.requests = []
        rp = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                rp.requests.append(self.path)
                body = b"<!doctype html><title>RP</title><p id='rp'>relying party</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"


def sign_up_with_passkey(driver, base, email, display_name):
    """Creates an account with a passkey in the virtual authenticator, then forgets the session."""
    driver.get(f"{base}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys(display_name)
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-signup"))).click()
    wait(driver).until(lambda d: d.current_url.split("?")[0].endswith("/account"))
    driver.delete_all_cookies()


def start_code_flow_with_passkey(driver, base, client_id, redirect_uri, scope="openid email", extra=()):
    """Sends the browser to /authorize (PKCE S256, state, nonce, then the `extra` parameters)
    and signs in with the passkey button; returns (verifier, state, nonce)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state, nonce = secrets.token_urlsafe(12), secrets.token_urlsafe(12)
    driver.get(f"{base}/authorize?" + urllib.parse.urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
        "scope": scope, "state": state, "nonce": nonce, "code_challenge": challenge,
        "code_challenge_method": "S256", **dict(extra),
    }))
    wait(driver).until(lambda d: "/signin" in d.current_url)
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-button"))).click()
    return verifier, state, nonce
