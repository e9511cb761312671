"""Passkey sign-in from a WebAuthn related origin (WebAuthn Level 3 §5.11), in headless Chromium.

A second site, https://related.test:<port>, is served by the test over TLS (self-signed; Chromium
runs with --ignore-certificate-errors) and mapped to 127.0.0.1 with --host-resolver-rules; the
server lists it in `webauthn.related_origins`. A related-origin request makes Chromium fetch
`https://<rpId>/.well-known/webauthn`, i.e. https://localhost:443: the host resolver maps
`localhost:443` to a TLS forwarder on an ephemeral port that passes the request to the server's
own endpoint. What was found on this machine (Chromium 156): an http related origin is no secure
context, so the related site must be https; an https page may call the http://localhost server
(loopback is potentially trustworthy, so no mixed-content block); with the well-known file
reachable, `navigator.credentials.get` with rpId `localhost` from related.test succeeds and its
clientDataJSON.origin is the related origin. https://other.test:<port> (same page server, not
listed) shows the refusals."""

import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

import conftest
from browser_flows import wait
from conftest import ROOT, free_port, run_sql, serve


class TLSServer:
    """A ThreadingHTTPServer over TLS on 127.0.0.1 with `handler`, on an ephemeral port."""

    def __init__(self, handler, certificate):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*certificate)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


class RelatedPage(BaseHTTPRequestHandler):
    """The related site's page: a secure-context document whose script the test runs."""

    def do_GET(self):
        body = b"<!doctype html><html lang=en><title>Related shop</title><h1>Related shop</h1></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def related():
    folder = tempfile.mkdtemp(prefix="auth-server-related-")
    os.chmod(folder, 0o755)
    key, cert = Path(folder) / "key.pem", Path(folder) / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=related.test", "-addext",
                    "subjectAltName=DNS:related.test,DNS:other.test,DNS:localhost"],
                   check=True, capture_output=True)
    page = TLSServer(RelatedPage, (str(cert), str(key)))
    port = free_port()
    base = f"http://localhost:{port}"
    forwarded = []

    class WellKnown(BaseHTTPRequestHandler):
        """https://localhost (the RP ID) → the server's own answer for the same path."""

        def do_GET(self):
            forwarded.append(self.path)
            try:
                with urllib.request.urlopen(base + self.path, timeout=10) as response:
                    status, body, kind = response.status, response.read(), response.headers.get("Content-Type")
            except urllib.error.HTTPError as error:
                status, body, kind = error.code, error.read(), error.headers.get("Content-Type")
            self.send_response(status)
            self.send_header("Content-Type", kind or "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    forwarder = TLSServer(WellKnown, (str(cert), str(key)))
    related_origin = f"https://related.test:{page.port}"
    try:
        with serve({
            "issuer": base,
            "listen": f"127.0.0.1:{port}",
            "data_dir": str(Path(folder) / "var"),
            "public_dir": str(ROOT / "public"),
            "webauthn": {"rp_name": "Example ID", "related_origins": [related_origin]},
            "clients": [],
        }, folder):
            conftest.DATA_DIRS[base] = folder
            yield {
                "server": base, "origin": related_origin, "other": f"https://other.test:{page.port}",
                "forwarder_port": forwarder.port, "forwarded": forwarded,
            }
    finally:
        page.close()
        forwarder.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def browser(related):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    rules = f"MAP related.test 127.0.0.1, MAP other.test 127.0.0.1, MAP localhost:443 127.0.0.1:{related['forwarder_port']}"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,1000",
                     "--disable-gpu", "--lang=en-US", f"--host-resolver-rules={rules}", "--ignore-certificate-errors"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options,
                              service=Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    driver.set_script_timeout(60)
    conftest.add_platform_authenticator(driver)
    yield driver
    driver.quit()


def passkey_sign_up(driver, server):
    """A new account with a passkey, made on the server's own pages."""
    email = f"related-{uuid.uuid4().hex[:8]}@example.com"
    driver.get(f"{server}/signup")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "display_name").send_keys("Related User")
    wait(driver).until(EC.element_to_be_clickable((By.ID, "passkey-signup"))).click()
    wait(driver).until(lambda d: d.current_url.split("?")[0].endswith("/account"))
    return email


# What a related site's page does: every step's outcome, as the page's script sees it (a
# CORS refusal is a TypeError, not a status).
CEREMONY = """
const [server, givenToken, done] = arguments;
const out = {};
const call = async (method, path, token, body) => {
  try {
    const headers = {"Content-Type": "application/json"};
    if (token) headers["X-CSRF-Token"] = token;
    const response = await fetch(server + path, {method, credentials: "include", headers, body});
    return {status: response.status, body: JSON.parse(await response.text() || "null")};
  } catch (error) {
    return {error: error.name};
  }
};
out.token = await call("GET", "/api/related-origins/csrf");
const token = givenToken ?? out.token.body?.csrf_token;
out.withoutToken = await call("POST", "/api/passkeys/authentication/start", null, "{}");
out.start = await call("POST", "/api/passkeys/authentication/start", token, "{}");
const options = out.start.body?.options ?? {challenge: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", rpId: "localhost",
                                              userVerification: "required", allowCredentials: []};
try {
  const credential = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)});
  out.clientOrigin = JSON.parse(new TextDecoder().decode(credential.response.clientDataJSON)).origin;
  out.finish = await call("POST", "/api/passkeys/authentication/finish", token,
                          JSON.stringify({challenge_id: out.start.body?.challenge_id, credential: credential.toJSON()}));
} catch (error) {
  out.get = error.name;
}
done(out);
"""


def challenge_count(server):
    return int(run_sql(server, "SELECT count(*) FROM passkey_authentication_challenges").strip())


def test_a_related_origin_signs_in_with_a_passkey(browser, related):
    server = related["server"]
    email = passkey_sign_up(browser, server)
    first_party_session = session_cookie(browser)
    browser.get(related["origin"] + "/")
    result = browser.execute_async_script(CEREMONY, server, None)

    assert result["token"]["status"] == 200 and result["token"]["body"]["csrf_token"]
    # A listed origin without its token is refused (and can read why).
    assert result["withoutToken"] == {"status": 403, "body": result["withoutToken"]["body"]}
    assert result["withoutToken"]["body"]["error"] == "csrf_failed"
    assert result["start"]["status"] == 200
    assert result["start"]["body"]["options"]["rpId"] == "localhost"
    # Chromium fetched the RP ID's related origins list, and the ceremony ran on the related origin.
    assert "/.well-known/webauthn" in related["forwarded"]
    assert result["clientOrigin"] == related["origin"]
    finish = result["finish"]
    assert finish["status"] == 200, finish
    assert finish["body"]["signals"]["current_user_details"]["name"] == email
    rows = run_sql(server, f"""SELECT e.email FROM authentication_sessions s JOIN account_emails e
                               ON e.account_id = s.account_id WHERE s.id = '{finish["body"]["session_id"]}'""")
    assert rows.strip() == email
    # The session cookie stays SameSite=Lax: Chromium does not store it from the cross-site
    # answer, so the browser keeps the session it had on the server's own pages (docs/security.md).
    browser.get(f"{server}/account")
    assert session_cookie(browser) == first_party_session


def session_cookie(driver):
    return next(c["value"] for c in driver.get_cookies() if c["name"] == "session")


def test_an_origin_not_in_the_list_is_refused(browser, related):
    server = related["server"]
    passkey_sign_up(browser, server)
    # A token issued to the listed origin, handed to the other site: still refused.
    browser.get(related["origin"] + "/")
    listed_token = browser.execute_async_script(
        """const [server, done] = arguments;
           fetch(server + "/api/related-origins/csrf", {credentials: "include"}).then(r => r.json()).then(j => done(j.csrf_token));""",
        server)
    assert listed_token
    before = challenge_count(server)
    browser.get(related["other"] + "/")
    result = browser.execute_async_script(CEREMONY, server, listed_token)

    # No CORS: the page can neither read an answer nor send its JSON POSTs.
    assert result["token"] == {"error": "TypeError"}
    assert result["withoutToken"] == {"error": "TypeError"}
    assert result["start"] == {"error": "TypeError"}
    assert challenge_count(server) == before
    # Nor may it use this RP ID: it is not in /.well-known/webauthn.
    assert result["get"] in ("SecurityError", "NotAllowedError")
    assert "finish" not in result
