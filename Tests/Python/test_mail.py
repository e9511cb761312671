"""Mail through a real SMTP receiver: `auth-server serve` with transport "smtp" sends to an
aiosmtpd server on 127.0.0.1 that requires STARTTLS (a self-signed certificate made here with
`openssl req`, given to the server as ca_file) and AUTH. The messages are parsed with Python's
email package, the code from them verifies the address, and the ID token then says so."""

import contextlib
import email
import email.policy
import json
import os
import re
import secrets
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import jwt as pyjwt
import pytest
import requests
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from authlib.integrations.requests_client import OAuth2Session

from conftest import PASSWORD, WEB_CLIENT, Browser, free_port, hash_secret, serve

ROOT = Path(__file__).resolve().parents[2]
SMTP_USER = "auth-server"
SMTP_PASSWORD = "smtp-" + secrets.token_hex(8)


class Mailbox:
    """aiosmtpd handler and authenticator: records every message, the login it came with and
    whether the session was encrypted."""

    def __init__(self):
        self.messages = []
        self.logins = []
        self.lock = threading.Lock()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        ok = auth_data.login == SMTP_USER.encode() and auth_data.password == SMTP_PASSWORD.encode()
        with self.lock:
            self.logins.append((mechanism, auth_data.login.decode(), ok))
        return AuthResult(success=ok)

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.messages.append({
                "from": envelope.mail_from, "to": list(envelope.rcpt_tos),
                # STARTTLS sets session.ssl; with implicit TLS the transport itself is TLS.
                "tls": session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None,
                "authenticated": session.authenticated,
                "message": email.message_from_bytes(envelope.original_content, policy=email.policy.default),
            })
        return "250 OK"

    def wait_for(self, address, predicate=lambda m: True, seconds=30):
        deadline = time.time() + seconds
        while time.time() < deadline:
            with self.lock:
                found = [m for m in self.messages if address in m["to"] and predicate(m["message"])]
            if found:
                return found[-1]
            time.sleep(0.1)
        raise AssertionError(f"no message to {address} within {seconds} s")


def parts(message):
    """The text and HTML alternatives of a multipart/alternative message."""
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    for part in (text, html):
        assert part.get_content_charset() == "utf-8"
        assert part["Content-Transfer-Encoding"] in ("base64", "quoted-printable")
    return text.get_content(), html.get_content()


def code_and_link(text):
    code = re.search(r"^\s*(\d{6})\s*$", text, re.M).group(1)
    link = re.search(r"(http\S+/verify-email\?\S+)", text).group(1)
    return code, link


def make_certificate(folder):
    cert, key = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True)
    return cert, key


@contextlib.contextmanager
def auth_server(folder, mail, **settings):
    """`auth-server serve` with the given `mail` settings and one confidential web client;
    `settings` adds or replaces top-level configuration members (`recovery`, `http`, …)."""
    port = free_port()
    base = f"http://localhost:{port}"
    secret = "mail-web-secret-" + uuid.uuid4().hex
    callback = f"http://127.0.0.1:{free_port()}/callback"
    with serve({
        "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(folder / "var"),
        "public_dir": str(ROOT / "public"), "mail": mail,
        "email_verification": {"code_lifetime_seconds": 600, "max_attempts": 5},
        "clients": [{
            "client_id": WEB_CLIENT, "client_name": "Python Web", "application_type": "web",
            "redirect_uris": [callback], "token_endpoint_auth_method": "client_secret_basic",
            "client_secret_hash": hash_secret(secret), "scope": "openid profile email",
        }],
        **settings,
    }, folder) as log_path:
        yield {"base": base, "secret": secret, "redirect_uri": callback, "log": log_path}


@contextlib.contextmanager
def smtp_receiver(folder):
    """An aiosmtpd receiver on 127.0.0.1 that requires STARTTLS and AUTH, with a self-signed
    certificate made in `folder`; yields its Mailbox and the `mail` settings that reach it."""
    cert, key = make_certificate(folder)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    mailbox = Mailbox()
    smtp_port = free_port()
    controller = Controller(
        mailbox, hostname="127.0.0.1", port=smtp_port, tls_context=context, require_starttls=True,
        authenticator=mailbox, auth_required=True, auth_require_tls=True)
    controller.start()
    password_file = folder / "smtp-password"
    password_file.write_text(SMTP_PASSWORD + "\n")
    mail = {
        "transport": "smtp", "from": "認証サーバー <no-reply@example.com>",
        "smtp": {"host": "localhost", "port": smtp_port, "security": "starttls", "username": SMTP_USER,
                 "password_file": str(password_file), "ca_file": str(cert), "timeout_seconds": 10},
    }
    try:
        yield mailbox, mail
    finally:
        controller.stop()


@pytest.fixture(scope="module")
def mail_server():
    """STARTTLS required, AUTH required, the certificate trusted through ca_file."""
    folder = Path(tempfile.mkdtemp(prefix="auth-server-mail-"))
    os.chmod(folder, 0o755)
    try:
        with smtp_receiver(folder) as (mailbox, mail), auth_server(folder, mail) as server:
            yield {**server, "mailbox": mailbox}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sign_up(base, language):
    browser = Browser(base)
    browser.session.headers["Accept-Language"] = language
    browser.sign_up(f"mail-{uuid.uuid4().hex[:8]}@example.com")
    return browser


def id_token_claims(server, browser):
    discovery = requests.get(server["base"] + "/.well-known/openid-configuration", timeout=10).json()
    client = OAuth2Session(WEB_CLIENT, server["secret"], scope="openid email", redirect_uri=server["redirect_uri"],
                           code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic")
    verifier = secrets.token_urlsafe(48)
    nonce = secrets.token_urlsafe(16)
    url, _ = client.create_authorization_url(
        discovery["authorization_endpoint"], nonce=nonce, code_verifier=verifier,
        claims=json.dumps({"id_token": {"email": None, "email_verified": None}}))
    callback = browser.authorize(url)
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    keys = pyjwt.PyJWKClient(discovery["jwks_uri"])
    key = keys.get_signing_key_from_jwt(token["id_token"])
    claims = pyjwt.decode(token["id_token"], key.key, algorithms=["RS256"], audience=WEB_CLIENT,
                          issuer=discovery["issuer"])
    assert claims["nonce"] == nonce
    info = requests.get(discovery["userinfo_endpoint"], timeout=10,
                        headers={"Authorization": f"Bearer {token['access_token']}"}).json()
    return claims, info


def test_verification_mail_in_english_verifies_the_address_and_the_id_token_says_so(mail_server):
    browser = sign_up(mail_server["base"], "en-US,en;q=0.9")
    received = mail_server["mailbox"].wait_for(browser.email)
    assert received["tls"] and received["authenticated"]
    assert received["from"] == "no-reply@example.com"
    message = received["message"]
    assert message["To"] == browser.email
    assert message["Subject"].endswith("confirm your email address")
    assert message["From"].addresses[0].display_name == "認証サーバー"
    assert message["Date"] and message["Message-ID"].endswith("@example.com>")
    text, html = parts(message)
    code, link = code_and_link(text)
    # The link carries a 128-bit token, never the code.
    assert link.startswith(mail_server["base"] + "/verify-email?token=") and code not in link
    assert code in html and '<html lang="en">' in html
    assert code not in message["Subject"]

    claims, info = id_token_claims(mail_server, browser)
    assert claims["email"] == browser.email and claims["email_verified"] is False
    assert info["email_verified"] is False

    wrong = browser.post_json("/api/account/email/verify", {"code": "000000" if code != "000000" else "111111"})
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_code"
    verified = browser.post_json("/api/account/email/verify", {"code": code})
    assert verified.status_code == 200, verified.text
    assert verified.json() == {"email_verified": True}
    replay = browser.post_json("/api/account/email/verify", {"code": code})
    assert replay.json()["error"] == "invalid_code"

    claims, info = id_token_claims(mail_server, browser)
    assert claims["email_verified"] is True
    assert info["email_verified"] is True
    logins = mail_server["mailbox"].logins
    assert logins and all(ok and login == SMTP_USER for _, login, ok in logins)


def test_verification_mail_in_japanese_and_the_link_page(mail_server):
    browser = sign_up(mail_server["base"], "ja,en;q=0.5")
    message = mail_server["mailbox"].wait_for(browser.email)["message"]
    assert message["Subject"].endswith("メールアドレスの確認")
    raw_subject = message.as_bytes().split(b"\nSubject: ", 1)[1].split(b"\n", 1)[0]
    assert raw_subject.startswith(b"=?UTF-8?B?")
    text, html = parts(message)
    assert "アカウントページ" in text and '<html lang="ja">' in html
    code, link = code_and_link(text)

    # The link works for whoever holds it, without a session.
    page = requests.get(link, timeout=10, headers={"Accept-Language": "ja"})
    assert page.status_code == 200
    assert "メールアドレスを確認しました" in page.text
    assert browser.session.get(mail_server["base"] + "/api/account", timeout=10).json()["email_verified"] is True


def test_resend_is_throttled(mail_server):
    browser = sign_up(mail_server["base"], "en")
    mail_server["mailbox"].wait_for(browser.email)
    again = browser.post_json("/api/account/email/resend", {})
    assert again.status_code == 429
    assert again.json()["error"] == "too_many_requests"
    assert int(again.headers["Retry-After"]) > 0


def test_password_change_sends_a_notification(mail_server):
    browser = sign_up(mail_server["base"], "en")
    mail_server["mailbox"].wait_for(browser.email)
    changed = browser.post_json("/api/password", {"current_password": PASSWORD, "new_password": PASSWORD + " again"})
    assert changed.status_code == 204, changed.text
    received = mail_server["mailbox"].wait_for(browser.email, lambda m: "password was changed" in m["Subject"])
    text, html = parts(received["message"])
    assert mail_server["base"] + "/account" in text
    assert "If this was not you" in text
    assert f'href="{mail_server["base"]}/account"' in html


def test_the_log_names_domains_not_codes(mail_server):
    browser = sign_up(mail_server["base"], "en")
    text, _ = parts(mail_server["mailbox"].wait_for(browser.email)["message"])
    code, _ = code_and_link(text)
    deadline = time.time() + 10
    log = ""
    while time.time() < deadline:
        log = mail_server["log"].read_text()
        if "event=mail.delivered" in log:
            break
        time.sleep(0.1)
    assert "event=mail.delivered domain=example.com" in log
    assert code not in log
    assert SMTP_PASSWORD not in log


# aiosmtpd cannot tell that an implicit-TLS session is encrypted, hence its warning.
@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_implicit_tls_with_the_password_from_the_environment(monkeypatch):
    """security "tls" (port 465 style): TLS from the first byte; the password comes from
    AUTH_SERVER_SMTP_PASSWORD instead of a file."""
    folder = Path(tempfile.mkdtemp(prefix="auth-server-mail-tls-"))
    os.chmod(folder, 0o755)
    cert, key = make_certificate(folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    mailbox = Mailbox()
    smtp_port = free_port()
    # aiosmtpd counts only STARTTLS as TLS for its auth_require_tls check; here every byte is TLS.
    controller = Controller(mailbox, hostname="127.0.0.1", port=smtp_port, ssl_context=context,
                            authenticator=mailbox, auth_required=True, auth_require_tls=False)
    controller.start()
    monkeypatch.setenv("AUTH_SERVER_SMTP_PASSWORD", SMTP_PASSWORD)
    mail = {"transport": "smtp", "from": "no-reply@example.com",
            "smtp": {"host": "127.0.0.1", "port": smtp_port, "security": "tls", "username": SMTP_USER,
                     "ca_file": str(cert)}}
    try:
        with auth_server(folder, mail) as server:
            browser = sign_up(server["base"], "ja")
            received = mailbox.wait_for(browser.email)
            assert received["tls"] and received["authenticated"]
            text, _ = parts(received["message"])
            code, _ = code_and_link(text)
            assert browser.post_json("/api/account/email/verify", {"code": code}).status_code == 200
    finally:
        controller.stop()
        shutil.rmtree(folder, ignore_errors=True)
