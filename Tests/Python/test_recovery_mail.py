"""Account recovery through a real SMTP receiver: `auth-server serve` mails through the
STARTTLS + AUTH aiosmtpd receiver of test_mail.py, and every code used here is read from a
delivered message. Recovery by password and by passkey (a software authenticator, softauthn.py),
used, superseded, expired and exhausted codes, unknown and unverified addresses answered like
known ones, and throttling per address and per client.

The server trusts 127.0.0.1 as a reverse proxy, so each test names its own client address in
X-Forwarded-For and the per-client counters of one test never touch another's."""

import itertools
import os
import re
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from conftest import PASSWORD, Browser
from auth_server import psql  # noqa: E402
from softauthn import SoftAuthenticator, b64url, unb64url
from test_mail import auth_server, code_and_link, parts, smtp_receiver

NEW_PASSWORD = "a brand new recovered passphrase"
MAX_ATTEMPTS = 3
START_MAX_PER_EMAIL = 3
START_MAX_PER_CLIENT = 6
VERIFY_MAX_PER_EMAIL = 10
ACCEPTED = {"status": "accepted",
            "message": "If this address belongs to an account with a verified email address, a code is on its way."}
CLIENT_ADDRESSES = (f"198.51.100.{n}" for n in itertools.count(1))


@pytest.fixture(scope="module")
def server():
    folder = Path(tempfile.mkdtemp(prefix="auth-server-recovery-"))
    os.chmod(folder, 0o755)  # the embedded cluster may run as the postgres user
    settings = {
        "http": {"trusted_proxies": ["127.0.0.1"]},
        "recovery": {"max_attempts": MAX_ATTEMPTS, "start_max_per_email": START_MAX_PER_EMAIL,
                     "start_max_per_client": START_MAX_PER_CLIENT, "verify_max_per_email": VERIFY_MAX_PER_EMAIL},
    }
    try:
        with smtp_receiver(folder) as (mailbox, mail), auth_server(folder, mail, **settings) as running:
            yield {**running, "mailbox": mailbox, "folder": folder}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_sql(server, sql):
    return psql(server["folder"], sql)

def client(server):
    """A browser-like client with a client address of its own."""
    browser = Browser(server["base"])
    browser.session.headers["X-Forwarded-For"] = next(CLIENT_ADDRESSES)
    return browser


def messages(server, address, subject=""):
    mailbox = server["mailbox"]
    with mailbox.lock:
        return [m for m in mailbox.messages if address in m["to"] and subject in m["message"]["Subject"]]


def wait_for_messages(server, address, subject, count, seconds=30):
    """The first `count` messages to `address` whose subject contains `subject`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        found = messages(server, address, subject)
        if len(found) >= count:
            return found[:count]
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} messages '{subject}' to {address} within {seconds} s")


def verified_account(server):
    """Signs up with a password and verifies the address with the mailed code."""
    browser = client(server)
    browser.sign_up(f"rec-{uuid.uuid4().hex[:8]}@example.com")
    text, _ = parts(wait_for_messages(server, browser.email, "confirm your email address", 1)[0]["message"])
    code, _ = code_and_link(text)
    verified = browser.post_json("/api/account/email/verify", {"code": code})
    assert verified.status_code == 200, verified.text
    account = browser.session.get(server["base"] + "/api/account", timeout=10).json()
    assert account["email_verified"] is True
    browser.account_id = account["id"]
    return browser


def start(browser, email, **extra):
    return browser.post_json("/api/recovery/start", {"email": email, **extra})


def recovery_code(server, address, number=1):
    """The code of the `number`th recovery mail to `address`, after checking the message: it came
    through TLS with AUTH, is multipart text + HTML, has the code in the body and never in the
    subject, and links to /recover with the code in the fragment."""
    received = wait_for_recovery(server, address, number)
    assert received["tls"] and received["authenticated"]
    message = received["message"]
    text, html = parts(message)
    code = re.search(r"^(?:Your code|コード): (\d{8})\s*$", text, re.M).group(1)
    assert code not in message["Subject"]
    assert code in html
    link = re.search(r"(http\S+/recover\?\S+)", text).group(1)
    assert link.startswith(server["base"] + "/recover?email=") and link.endswith(f"#code={code}")
    return code, message


def wait_for_recovery(server, address, count):
    """The `count`th recovery-code message to `address`, in either language."""
    deadline = time.time() + 30
    while time.time() < deadline:
        found = [m for m in messages(server, address) if is_recovery_code(m["message"])]
        if len(found) >= count:
            return found[count - 1]
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} recovery codes to {address}")


def is_recovery_code(message):
    return "recovery code" in message["Subject"] or "アカウント復旧コード" in message["Subject"]


def verify(browser, email, code):
    return browser.post_json("/api/recovery/verify", {"email": email, "code": code})


def other_code(code):
    return f"{(int(code) + 1) % 100_000_000:08d}"


def assert_error(response, status, error):
    assert response.status_code == status, response.text
    assert response.json()["error"] == error, response.text


def test_recovery_by_password_with_the_mailed_code(server):
    """start → code by SMTP → verify → new password → signed in; the old password stops
    working, the new one works, the notice arrives, and the other sessions can be ended."""
    owner = verified_account(server)
    rescuer = client(server)
    started = start(rescuer, owner.email)
    assert started.status_code == 202 and started.json() == ACCEPTED

    code, message = recovery_code(server, owner.email)
    assert message["Subject"] == "Your localhost recovery code"
    assert message["To"] == owner.email
    verified = verify(rescuer, owner.email, f"{code[:4]} {code[4:]}")
    assert verified.status_code == 200, verified.text
    assert verified.json() == {"status": "verified", "methods": ["passkey", "password"], "expires_in": 900}
    recovery_token = rescuer.session.cookies.get("recovery")
    assert recovery_token
    # The recovery session opens nothing else: the account API still wants a real session.
    assert_error(rescuer.session.get(server["base"] + "/api/account", timeout=10), 401, "not_signed_in")

    weak = rescuer.post_json("/api/recovery/password", {"new_password": "short"})
    assert_error(weak, 400, "weak_password")
    recovered = rescuer.post_json("/api/recovery/password", {"new_password": NEW_PASSWORD})
    assert recovered.status_code == 200, recovered.text
    assert recovered.json()["account_id"] == owner.account_id
    assert not rescuer.session.cookies.get("recovery")
    assert rescuer.session.get(server["base"] + "/api/account", timeout=10).json()["email"] == owner.email

    # The recovery was used once; neither it nor the code works again.
    assert_error(rescuer.post_json("/api/recovery/password", {"new_password": NEW_PASSWORD + "!"}),
                 401, "recovery_required")
    assert_error(verify(client(server), owner.email, code), 400, "invalid_code")

    notice = wait_for_messages(server, owner.email, "account was recovered", 1)[0]
    assert notice["tls"] and notice["authenticated"]
    text, html = parts(notice["message"])
    assert "A new password was set." in text and "A new password was set." in html
    assert "Every browser was signed out" in text
    assert code not in text

    old = client(server).post_json("/api/signin/password", {"email": owner.email, "password": PASSWORD})
    assert_error(old, 401, "invalid_credentials")
    new = client(server)
    signed_in = new.post_json("/api/signin/password", {"email": owner.email, "password": NEW_PASSWORD})
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["account_id"] == owner.account_id

    # The recovery itself ended the owner's old session (from sign-up); "sign out everywhere
    # else" ends the new sign-in; the recovered one stays.
    assert_error(owner.session.get(server["base"] + "/api/account", timeout=10), 401, "not_signed_in")
    ended = rescuer.post_json("/api/recovery/end-other-sessions", {})
    assert ended.status_code == 200 and ended.json() == {"revoked": 1}
    assert_error(new.session.get(server["base"] + "/api/account", timeout=10), 401, "not_signed_in")
    assert rescuer.session.get(server["base"] + "/api/account", timeout=10).status_code == 200

    log = server["log"].read_text()
    assert "event=recovery.completed" in log and "method=password" in log
    assert code not in log and recovery_token not in log and NEW_PASSWORD not in log


def test_recovery_by_passkey_then_sign_in_with_it(server):
    """start → code by SMTP → verify → a new passkey (software authenticator, none attestation,
    UP|UV) → signed in; that passkey then signs in through the passkey endpoints."""
    owner = verified_account(server)
    rescuer = client(server)
    assert start(rescuer, owner.email).status_code == 202
    code, _ = recovery_code(server, owner.email)
    assert verify(rescuer, owner.email, code).status_code == 200

    challenge = rescuer.post_json("/api/recovery/passkey/start", {})
    assert challenge.status_code == 200, challenge.text
    options = challenge.json()["options"]
    assert options["rp"]["id"] == "localhost"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    assert options["excludeCredentials"] == []
    authenticator = SoftAuthenticator()
    credential = authenticator.create(options, server["base"])
    finished = rescuer.post_json("/api/recovery/passkey/finish", {
        "challenge_id": challenge.json()["challenge_id"], "credential": credential, "name": "Recovery key"})
    assert finished.status_code == 200, finished.text
    assert finished.json()["account_id"] == owner.account_id
    assert not rescuer.session.cookies.get("recovery")
    passkeys = rescuer.session.get(server["base"] + "/api/passkeys", timeout=10).json()["passkeys"]
    assert [(p["name"], p["credential_id"]) for p in passkeys] == [("Recovery key", credential["id"])]
    # The recovery session is spent: no second passkey through it.
    assert_error(rescuer.post_json("/api/recovery/passkey/start", {}), 401, "recovery_required")

    notice = wait_for_messages(server, owner.email, "account was recovered", 1)[0]
    text, _ = parts(notice["message"])
    assert "A new passkey was added." in text

    device = client(server)
    # A signature that does not cover what is sent is refused (the server really checks it).
    tampered_start = device.post_json("/api/passkeys/authentication/start", {}).json()
    tampered = authenticator.get(tampered_start["options"], server["base"])
    auth_data = bytearray(unb64url(tampered["response"]["authenticatorData"]))
    auth_data[-1] ^= 0x01
    tampered["response"]["authenticatorData"] = b64url(bytes(auth_data))
    assert_error(device.post_json("/api/passkeys/authentication/finish", {
        "challenge_id": tampered_start["challenge_id"], "credential": tampered}), 400, "passkey_verification_failed")

    sign_in = device.post_json("/api/passkeys/authentication/start", {})
    assert sign_in.status_code == 200, sign_in.text
    assertion = authenticator.get(sign_in.json()["options"], server["base"])
    signed_in = device.post_json("/api/passkeys/authentication/finish", {
        "challenge_id": sign_in.json()["challenge_id"], "credential": assertion})
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["account_id"] == owner.account_id
    assert device.session.get(server["base"] + "/api/account", timeout=10).json()["email"] == owner.email
    sessions = device.session.get(server["base"] + "/api/sessions", timeout=10).json()["sessions"]
    assert [s["amr"] for s in sessions if s["current"]] == [["hwk", "user", "mfa"]]

    # The same assertion again: its challenge is used up.
    assert_error(device.post_json("/api/passkeys/authentication/finish", {
        "challenge_id": sign_in.json()["challenge_id"], "credential": assertion}), 400, "challenge_invalid")


def test_a_used_code_and_a_superseded_code_are_refused(server):
    """A second start retires the first code (here in Japanese); the live code works once."""
    owner = verified_account(server)
    rescuer = client(server)
    assert start(rescuer, owner.email).status_code == 202
    first, _ = recovery_code(server, owner.email)
    assert start(rescuer, owner.email, ui_locales="ja").status_code == 202
    second, message = recovery_code(server, owner.email, number=2)
    assert message["Subject"] == "localhost のアカウント復旧コード"

    if first != second:
        assert_error(verify(rescuer, owner.email, first), 400, "invalid_code")
    assert verify(rescuer, owner.email, second).status_code == 200
    replay = verify(client(server), owner.email, second)
    assert_error(replay, 400, "invalid_code")
    assert replay.json()["message"] == "This code is not valid. Check it, or ask for a new one."


def test_an_expired_code_is_refused_as_expired(server):
    owner = verified_account(server)
    rescuer = client(server)
    assert start(rescuer, owner.email).status_code == 202
    code, _ = recovery_code(server, owner.email)
    moved = run_sql(server, "UPDATE recovery_codes SET expires_at = now() - interval '1 second' "
                            f"WHERE account_id = '{owner.account_id}' AND consumed_at IS NULL RETURNING id")
    assert len(moved.splitlines()) == 1
    assert_error(verify(rescuer, owner.email, code), 400, "code_expired")
    assert_error(verify(rescuer, owner.email, other_code(code)), 400, "invalid_code")
    assert not rescuer.session.cookies.get("recovery")
    assert_error(rescuer.post_json("/api/recovery/password", {"new_password": NEW_PASSWORD}), 401,
                 "recovery_required")


def test_wrong_codes_exhaust_the_live_code(server):
    """After recovery.max_attempts wrong codes even the right one is refused, alike."""
    owner = verified_account(server)
    rescuer = client(server)
    assert start(rescuer, owner.email).status_code == 202
    code, _ = recovery_code(server, owner.email)
    wrong = [verify(rescuer, owner.email, other_code(code)) for _ in range(MAX_ATTEMPTS)]
    for response in wrong:
        assert_error(response, 400, "invalid_code")
    exhausted = verify(rescuer, owner.email, code)
    assert exhausted.status_code == 400 and exhausted.json() == wrong[0].json()
    assert not rescuer.session.cookies.get("recovery")
    attempts = run_sql(server, f"SELECT attempts FROM recovery_codes WHERE account_id = '{owner.account_id}'")
    assert attempts == str(MAX_ATTEMPTS)


def test_unknown_and_unverified_addresses_are_answered_like_a_known_one(server):
    """Same status, body and content type; only the verified address gets a code."""
    known = verified_account(server)
    unverified = client(server)
    unverified.sign_up(f"rec-unverified-{uuid.uuid4().hex[:8]}@example.com")
    wait_for_messages(server, unverified.email, "confirm your email address", 1)
    unknown = f"rec-unknown-{uuid.uuid4().hex[:8]}@example.com"

    stranger = client(server)
    answers = [start(stranger, address) for address in (known.email, unverified.email, unknown)]
    for answer in answers:
        assert answer.status_code == 202
        assert answer.content == answers[0].content
        assert answer.headers["Content-Type"] == answers[0].headers["Content-Type"]
    assert answers[0].json() == ACCEPTED

    code, _ = recovery_code(server, known.email)
    # The known address's code was delivered; give the others as long again to show up.
    time.sleep(3)
    assert messages(server, unknown) == []
    # The unverified address got its sign-up verification mail and nothing else.
    subjects = [m["message"]["Subject"] for m in messages(server, unverified.email)]
    assert subjects and all(subject.endswith("confirm your email address") for subject in subjects)

    # Guessing a code is refused alike for all three.
    guesses = [verify(stranger, address, other_code(code))
               for address in (known.email, unverified.email, unknown)]
    for guess in guesses:
        assert guess.status_code == 400 and guess.content == guesses[0].content


def test_starts_are_throttled_per_address_and_per_client(server):
    owner = verified_account(server)
    unknown = f"rec-unknown-{uuid.uuid4().hex[:8]}@example.com"
    first, second = client(server), client(server)

    # Per address, whoever asks, known or not.
    for _ in range(START_MAX_PER_EMAIL):
        assert start(first, owner.email).status_code == 202
        assert start(second, unknown).status_code == 202
    limited = [start(client(server), address) for address in (owner.email, unknown)]
    for response in limited:
        assert_error(response, 429, "too_many_attempts")
        assert 0 < int(response.headers["Retry-After"]) <= 900
    assert limited[0].json() == limited[1].json()
    wait_for_recovery(server, owner.email, START_MAX_PER_EMAIL)
    time.sleep(2)
    assert len([m for m in messages(server, owner.email) if is_recovery_code(m["message"])]) == START_MAX_PER_EMAIL

    # Per client: many addresses from one client address.
    busy = client(server)
    for _ in range(START_MAX_PER_CLIENT):
        assert start(busy, f"rec-many-{uuid.uuid4().hex[:8]}@example.com").status_code == 202
    address = f"rec-many-{uuid.uuid4().hex[:8]}@example.com"
    refused = start(busy, address)
    assert_error(refused, 429, "too_many_attempts")
    assert 0 < int(refused.headers["Retry-After"]) <= 900
    # The same address from another client is not held back by that client's count.
    assert start(client(server), address).status_code == 202


def test_code_checks_are_throttled_per_address(server):
    unknown = f"rec-unknown-{uuid.uuid4().hex[:8]}@example.com"
    for _ in range(VERIFY_MAX_PER_EMAIL):
        assert_error(verify(client(server), unknown, "12345678"), 400, "invalid_code")
    refused = verify(client(server), unknown, "12345678")
    assert_error(refused, 429, "too_many_attempts")
    assert int(refused.headers["Retry-After"]) > 0
