"""Fixtures for the OpenID Connect integration tests: a real `auth-server serve` on an
ephemeral port with its embedded PostgreSQL in a temporary data_dir, two clients (a
confidential web app and a public native app), a back-channel logout receiver on 127.0.0.1,
and a browser-like requests.Session that signs a user in through the JSON API."""

import os
import re
import shutil
import subprocess
import tempfile
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
from html import unescape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pysupport"))
from auth_server import ROOT, binary, free_port, serve  # noqa: E402  (re-exported to the tests)

WEB_CLIENT = "py-web"
NATIVE_CLIENT = "py-native"
PASSWORD = "correct horse battery staple"


class LogoutReceiver:
    """Records back-channel logout POSTs; answers the first `failures` with 503."""

    def __init__(self, failures=1):
        self.bodies = []
        self.failures = failures
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length).decode()
                with receiver.lock:
                    receiver.bodies.append({"body": body, "content_type": self.headers.get("Content-Type")})
                    fail = receiver.failures > 0
                    if fail:
                        receiver.failures -= 1
                self.send_response(503 if fail else 200)
                self.send_header("Content-Length", "0")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def uri(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/backchannel"

    def wait_for(self, count, seconds=30):
        deadline = time.time() + seconds
        while time.time() < deadline:
            with self.lock:
                if len(self.bodies) >= count:
                    return list(self.bodies)
            time.sleep(0.05)
        with self.lock:
            return list(self.bodies)

    def close(self):
        self.server.shutdown()


def hash_secret(secret):
    result = subprocess.run([binary(), "clients", "hash-secret"], input=secret + "\n", capture_output=True,
                            text=True, check=True)
    return dict(line.split(": ", 1) for line in result.stdout.strip().splitlines())["client_secret_hash"]


@pytest.fixture(scope="session")
def receiver():
    receiver = LogoutReceiver(failures=1)
    yield receiver
    receiver.close()


ALGORITHM_CLIENTS = {"py-ps256": "PS256", "py-eddsa": "EdDSA"}


@pytest.fixture(scope="session")
def server(receiver):
    port = free_port()
    base = f"http://localhost:{port}"
    data_dir = tempfile.mkdtemp(prefix="auth-server-oidc-")
    os.chmod(data_dir, 0o755)  # the embedded cluster may run as the postgres user
    secret = "py-web-secret-" + uuid.uuid4().hex + uuid.uuid4().hex
    callback_port = free_port()
    try:
        with serve({
            "issuer": base,
            "listen": f"127.0.0.1:{port}",
            "data_dir": str(Path(data_dir) / "var"),
            "public_dir": str(ROOT / "public"),
            "oauth": {"backchannel_retry_base_seconds": 1},
            "clients": [
                {
                    "client_id": WEB_CLIENT, "client_name": "Python Web", "application_type": "web",
                    "redirect_uris": [f"http://127.0.0.1:{callback_port}/callback"],
                    "post_logout_redirect_uris": [f"http://127.0.0.1:{callback_port}/signed-out"],
                    "token_endpoint_auth_method": "client_secret_basic", "client_secret_hash": hash_secret(secret),
                    "grant_types": ["authorization_code", "refresh_token", "client_credentials"],
                    "scope": "openid profile email offline_access",
                    "backchannel_logout_uri": receiver.uri,
                },
                {
                    "client_id": NATIVE_CLIENT, "client_name": "Python Native", "application_type": "native",
                    "redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"], "scope": "openid profile email offline_access",
                    "first_party": True,
                },
            ] + [
                # ID tokens in the algorithms that have no key until the server creates one.
                {
                    "client_id": client_id, "client_name": client_id, "application_type": "web",
                    "redirect_uris": [f"http://127.0.0.1:{callback_port}/callback"],
                    "client_secret_hash": hash_secret(secret), "id_token_signed_response_alg": algorithm,
                }
                for client_id, algorithm in ALGORITHM_CLIENTS.items()
            ],
        }, data_dir):
            yield {
                "base": base, "secret": secret, "redirect_uri": f"http://127.0.0.1:{callback_port}/callback",
                "post_logout_uri": f"http://127.0.0.1:{callback_port}/signed-out", "log": Path(data_dir) / "server.log",
            }
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def discovery(server):
    return requests.get(server["base"] + "/.well-known/openid-configuration", timeout=10).json()


class Browser:
    """A requests.Session that behaves like the login pages' scripts: CSRF token, Origin."""

    def __init__(self, base):
        self.base = base
        self.session = requests.Session()
        self.csrf = None

    def post_json(self, path, payload):
        if self.csrf is None:
            self.csrf = self.session.get(self.base + "/api/csrf", timeout=10).json()["csrf_token"]
        return self.session.post(self.base + path, json=payload, timeout=10,
                                 headers={"X-CSRF-Token": self.csrf, "Origin": self.base})

    def sign_up(self, email=None):
        email = email or f"py-{uuid.uuid4().hex[:8]}@example.com"
        response = self.post_json("/api/signup/password", {"email": email, "display_name": "Py Thon", "password": PASSWORD})
        assert response.status_code in (200, 201), response.text
        self.email = email
        return email

    def authorize(self, url, consent="allow"):
        """Follows /authorize → (/signin is skipped: already signed in) → consent → the
        client's callback, and returns the callback URL without requesting it."""
        response = self.session.get(url, allow_redirects=False, timeout=10)
        for _ in range(5):
            if response.status_code in (302, 303):
                location = urllib.parse.urljoin(self.base, response.headers["Location"])
                if not location.startswith(self.base):
                    return location
                response = self.session.get(location, allow_redirects=False, timeout=10)
            elif response.status_code == 200 and 'action="/authorize/consent"' in response.text:
                fields = hidden_fields(response.text)
                fields["decision"] = consent
                response = self.session.post(self.base + "/authorize/consent", data=fields, allow_redirects=False,
                                             headers={"Origin": self.base}, timeout=10)
            else:
                raise AssertionError(f"unexpected {response.status_code}: {response.text[:300]}")
        raise AssertionError("too many redirects")


def hidden_fields(html):
    return {unescape(name): unescape(value)
            for name, value in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', html)}


@pytest.fixture
def browser(server):
    browser = Browser(server["base"])
    browser.sign_up()
    return browser
