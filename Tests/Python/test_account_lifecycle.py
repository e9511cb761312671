"""The account's whole life against a real `auth-server serve`: self-service deletion (recent
sign-in required; afterwards no row of any table names the account, its address or its user
handle; back-channel logout delivered; goodbye mail; tokens and passkey dead), the email change
(verified before it applies, the old address told, undo, throttled, recent sign-in required) and
the data export (its sections, and no secret in it)."""

import contextlib
import json
import os
import re
import secrets
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session

from conftest import PASSWORD, Browser, LogoutReceiver, free_port, hash_secret, serve
from auth_server import psql  # noqa: E402
from softauthn import SoftAuthenticator
from test_mail import code_and_link, parts, smtp_receiver

ROOT = Path(__file__).resolve().parents[2]
CLIENT = "life-web"


@pytest.fixture(scope="module")
def server():
    """SMTP receiver, back-channel logout receiver, and the server with one web client."""
    folder = Path(tempfile.mkdtemp(prefix="auth-server-life-"))
    os.chmod(folder, 0o755)
    receiver = LogoutReceiver(failures=0)
    port = free_port()
    base = f"http://localhost:{port}"
    secret = "life-secret-" + uuid.uuid4().hex
    callback = f"http://127.0.0.1:{free_port()}/callback"
    try:
        with smtp_receiver(folder) as (mailbox, mail), serve({
            "issuer": base, "listen": f"127.0.0.1:{port}", "data_dir": str(folder / "var"),
            "public_dir": str(ROOT / "public"), "mail": mail,
            "oauth": {"backchannel_retry_base_seconds": 1},
            "clients": [{
                "client_id": CLIENT, "client_name": "Lifecycle Web", "application_type": "web",
                "redirect_uris": [callback], "token_endpoint_auth_method": "client_secret_basic",
                "client_secret_hash": hash_secret(secret), "scope": "openid profile email offline_access",
                "grant_types": ["authorization_code", "refresh_token"],
                "backchannel_logout_uri": receiver.uri,
            }],
        }, folder) as log:
            yield {"base": base, "secret": secret, "redirect_uri": callback, "mailbox": mailbox,
                   "receiver": receiver, "folder": folder, "log": log}
    finally:
        receiver.close()
        shutil.rmtree(folder, ignore_errors=True)


def run_sql(server, sql):
    return psql(server["folder"], sql)

def verified_account(server):
    """A password account whose address is verified with the mailed code."""
    browser = Browser(server["base"])
    browser.sign_up(f"life-{uuid.uuid4().hex[:10]}@example.com")
    message = server["mailbox"].wait_for(browser.email)["message"]
    code, _ = code_and_link(parts(message)[0])
    verified = browser.post_json("/api/account/email/verify", {"code": code})
    assert verified.status_code == 200, verified.text
    browser.account_id = browser.session.get(server["base"] + "/api/account", timeout=10).json()["id"]
    return browser


def age_sign_in(server, browser):
    """Makes the browser's sign-in two days old: a credential change then needs a new one."""
    run_sql(server, f"UPDATE authentication_sessions SET auth_time = now() - interval '2 days' "
                    f"WHERE account_id = '{browser.account_id}'")


def delete(browser, email=None):
    browser.csrf = None
    csrf = browser.session.get(browser.base + "/api/csrf", timeout=10).json()["csrf_token"]
    return browser.session.delete(browser.base + "/api/account", json={"email": email or browser.email},
                                  headers={"X-CSRF-Token": csrf, "Origin": browser.base}, timeout=10)


def tokens(server, browser):
    """An access and refresh token for the web client, through consent."""
    discovery = requests.get(server["base"] + "/.well-known/openid-configuration", timeout=10).json()
    client = OAuth2Session(CLIENT, server["secret"], scope="openid email offline_access",
                           redirect_uri=server["redirect_uri"], code_challenge_method="S256",
                           token_endpoint_auth_method="client_secret_basic")
    verifier = secrets.token_urlsafe(48)
    url, _ = client.create_authorization_url(discovery["authorization_endpoint"], code_verifier=verifier,
                                             nonce=secrets.token_urlsafe(16), prompt="consent")
    callback = browser.authorize(url)
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    return discovery, token


def link_upstream(server, browser, subject):
    """An upstream identity linked to the account, as a sign-in with Apple leaves it (the link
    itself is made by the upstream sign-in flow; here only its row matters)."""
    run_sql(server, "INSERT INTO upstream_identities (id, account_id, provider, issuer, subject, email, "
                    "email_verified, is_private_email, refresh_token_ciphertext) VALUES "
                    f"(gen_random_uuid(), '{browser.account_id}', 'apple', 'https://appleid.apple.com', "
                    f"'{subject}', '{subject}@privaterelay.appleid.com', true, true, decode('0102', 'hex'))")


def register_passkey(browser):
    authenticator = SoftAuthenticator()
    start = browser.post_json("/api/passkeys/registration/start", {})
    assert start.status_code == 200, start.text
    credential = authenticator.create(start.json()["options"], browser.base)
    finish = browser.post_json("/api/passkeys/registration/finish", {
        "challenge_id": start.json()["challenge_id"], "credential": credential, "name": "Life key"})
    assert finish.status_code == 201, finish.text
    return authenticator


# MARK: - Deletion

def test_deletion_without_a_recent_sign_in_is_refused(server):
    """An attacker with a stolen session cookie, hours after the sign-in, cannot delete."""
    owner = verified_account(server)
    attacker = Browser(server["base"])
    attacker.session.cookies.update(owner.session.cookies)
    age_sign_in(server, owner)
    refused = delete(attacker, email=owner.email)
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"] == "reauthentication_required"
    assert run_sql(server, f"SELECT count(*) FROM accounts WHERE id = '{owner.account_id}'") == "1"
    # With a fresh password the owner can.
    again = owner.post_json("/api/reauthenticate/password", {"password": PASSWORD})
    assert again.status_code in (200, 204), again.text
    assert delete(owner).status_code == 200


def test_deletion_needs_the_address_typed_again(server):
    owner = verified_account(server)
    wrong = delete(owner, email="someone-else@example.com")
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "confirmation_required"
    assert run_sql(server, f"SELECT count(*) FROM accounts WHERE id = '{owner.account_id}'") == "1"


def test_deletion_leaves_no_row_that_names_the_account(server):
    owner = verified_account(server)
    authenticator = register_passkey(owner)
    discovery, token = tokens(server, owner)
    sid_before = len(server["receiver"].bodies)
    handle = run_sql(server, f"SELECT encode(webauthn_user_handle, 'hex') FROM accounts WHERE id = '{owner.account_id}'")
    assert len(handle) >= 32
    link_upstream(server, owner, "apple-" + uuid.uuid4().hex)
    # Something to anonymise: a failed sign-in names the address in the throttle table.
    Browser(server["base"]).post_json("/api/signin/password", {"email": owner.email, "password": "wrong one!"})

    deleted = delete(owner)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"deleted": True}
    cookies = deleted.headers.get("Set-Cookie", "")
    assert re.search(r"session=;|session=\"\";|Max-Age=0", cookies), cookies
    assert owner.session.get(server["base"] + "/api/account", timeout=10).status_code == 401

    # Back-channel logout to the client the session signed in to, for this subject.
    bodies = server["receiver"].wait_for(sid_before + 1)
    assert len(bodies) > sid_before
    import jwt as pyjwt
    claims = [pyjwt.decode(b["body"].split("=", 1)[1], options={"verify_signature": False})
              for b in bodies[sid_before:]]
    assert any(c["sub"] == owner.account_id and c.get("sid") for c in claims)

    # Goodbye mail to the verified address.
    goodbye = server["mailbox"].wait_for(owner.email, lambda m: "deleted" in m["Subject"])
    assert "cannot be undone" in parts(goodbye["message"])[0]

    # The tokens and the passkey are dead.
    refreshed = requests.post(discovery["token_endpoint"], auth=(CLIENT, server["secret"]), timeout=10,
                              data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]})
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
    info = requests.get(discovery["userinfo_endpoint"], timeout=10,
                        headers={"Authorization": f"Bearer {token['access_token']}"})
    assert info.status_code == 401
    device = Browser(server["base"])
    start = device.post_json("/api/passkeys/authentication/start", {})
    assertion = authenticator.get(start.json()["options"], server["base"])
    refused = device.post_json("/api/passkeys/authentication/finish",
                               {"challenge_id": start.json()["challenge_id"], "credential": assertion})
    assert refused.status_code in (400, 401), refused.text

    # Once the deliveries are done, no row of any table contains the id, the address or the
    # user handle (audit rows stay, under an anonymous id, without them).
    deadline = time.time() + 20
    while time.time() < deadline and run_sql(
            server, f"SELECT count(*) FROM backchannel_logout_deliveries WHERE account_id = '{owner.account_id}'") != "0":
        time.sleep(0.2)
    tables = run_sql(server, "SELECT table_name FROM information_schema.tables "
                             "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'").split()
    assert "audit_events" in tables and "email_changes" in tables and len(tables) > 25
    assert run_sql(server, f"SELECT count(*) FROM upstream_identities WHERE account_id = '{owner.account_id}'") == "0"
    needles = [owner.account_id, owner.email.lower(), handle]
    for table in tables:
        for needle in needles:
            found = run_sql(server, f"SELECT count(*) FROM {table} t WHERE lower(t::text) LIKE '%{needle}%'")
            assert found == "0", f"{table} still names {needle}"
    anonymous = run_sql(server, "SELECT account_id FROM audit_events WHERE event = 'account.deleted' "
                                "AND actor = 'user' ORDER BY id DESC LIMIT 1")
    assert anonymous and anonymous != owner.account_id
    kept = run_sql(server, f"SELECT count(*) FROM audit_events WHERE account_id = '{anonymous}' "
                           "AND event IN ('account.created', 'email.verified', 'passkey.added')")
    assert int(kept) == 3
    assert run_sql(server, f"SELECT count(*) FROM audit_events WHERE account_id = '{anonymous}' "
                           "AND client_address <> ''") == "0"


# MARK: - Email change

def change(browser, email):
    return browser.post_json("/api/account/email/change", {"email": email})


def post_undo(server, browser, fields):
    """Posts the undo page's form (its hidden fields) from `browser`, as its button does."""
    return browser.session.post(server["base"] + "/account/email/undo", data=fields,
                                headers={"Origin": server["base"]}, timeout=10)


def test_email_change_applies_only_after_the_new_address_is_confirmed(server):
    owner = verified_account(server)
    old = owner.email
    new = f"new-{uuid.uuid4().hex[:10]}@example.com"
    asked = change(owner, new)
    assert asked.status_code == 202, asked.text
    assert asked.json() == {"pending_email": new}
    message = server["mailbox"].wait_for(new)["message"]
    text = parts(message)[0]
    code = re.search(r"^\s*(\d{6})\s*$", text, re.M).group(1)
    assert "/account/email/confirm?token=" in text

    # Not applied yet: the old address still signs in, the new one does not.
    assert owner.session.get(server["base"] + "/api/account", timeout=10).json()["email"] == old
    assert Browser(server["base"]).post_json("/api/signin/password", {"email": new, "password": PASSWORD}).status_code != 200
    wrong = owner.post_json("/api/account/email/change/confirm", {"code": "000000" if code != "000000" else "111111"})
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_code"

    confirmed = owner.post_json("/api/account/email/change/confirm", {"code": code})
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json() == {"email": new, "email_verified": True}
    assert Browser(server["base"]).post_json("/api/signin/password", {"email": new, "password": PASSWORD}).status_code == 200
    assert Browser(server["base"]).post_json("/api/signin/password", {"email": old, "password": PASSWORD}).status_code != 200

    # The old address is told, with an undo link that works once and ends every session.
    notice = server["mailbox"].wait_for(old, lambda m: "changed" in m["Subject"])
    undo_link = re.search(r"(http\S+/account/email/undo\?token=\S+)", parts(notice["message"])[0]).group(1)
    assert new in parts(notice["message"])[0]
    stranger = Browser(server["base"])
    page = stranger.session.get(undo_link, timeout=10)
    assert page.status_code == 200 and 'action="/account/email/undo"' in page.text
    # Opening the link changes nothing (a mail scanner may fetch it).
    assert owner.session.get(server["base"] + "/api/account", timeout=10).json()["email"] == new
    fields = dict(re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page.text))
    undone = post_undo(server, stranger, fields)
    assert undone.status_code == 200, undone.text
    assert owner.session.get(server["base"] + "/api/account", timeout=10).status_code == 401
    again = Browser(server["base"])
    assert again.post_json("/api/signin/password", {"email": old, "password": PASSWORD}).status_code == 200
    account = again.session.get(server["base"] + "/api/account", timeout=10).json()
    assert account["email"] == old and account["email_verified"] is True
    replay = post_undo(server, stranger, fields)
    assert replay.status_code == 400
    events = run_sql(server, f"SELECT string_agg(event, ',' ORDER BY id) FROM audit_events "
                             f"WHERE account_id = '{owner.account_id}' AND event LIKE 'email.change%'")
    assert events == "email.change_requested,email.changed,email.change_undone" or \
        events.split(",") == ["email.change_requested", "email.changed", "email.change_undone"]


def undo_fields(server, browser, address, changed_to):
    """The hidden fields of the undo page linked from the notice that `address` was changed,
    opened in `browser` (its CSRF token is that browser's)."""
    notice = server["mailbox"].wait_for(
        address, lambda m: "changed" in m["Subject"] and changed_to in parts(m)[0])
    link = re.search(r"(http\S+/account/email/undo\?token=\S+)", parts(notice["message"])[0]).group(1)
    page = browser.session.get(link, timeout=10)
    assert page.status_code == 200, page.text
    return dict(re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page.text))


def test_an_attackers_own_undo_does_not_cancel_the_owners(server):
    """Someone in the account moves its address to B, then at once to C. The owner's address A
    is told, with an undo link; so is B, which the attacker reads. The attacker's undo (back to
    B) must leave the owner's link working: it restores A and ends every session."""
    owner = verified_account(server)
    original = owner.email
    first = f"first-{uuid.uuid4().hex[:10]}@example.com"
    second = f"second-{uuid.uuid4().hex[:10]}@example.com"
    for address in (first, second):
        assert change(owner, address).status_code == 202
        text = parts(server["mailbox"].wait_for(address)["message"])[0]
        code = re.search(r"^\s*(\d{6})\s*$", text, re.M).group(1)
        confirmed = owner.post_json("/api/account/email/change/confirm", {"code": code})
        assert confirmed.status_code == 200, confirmed.text
    attacker, stranger = Browser(server["base"]), Browser(server["base"])
    owners_undo = undo_fields(server, stranger, original, first)
    attackers_undo = undo_fields(server, attacker, first, second)

    done = post_undo(server, attacker, attackers_undo)
    assert done.status_code == 200, done.text

    restored = post_undo(server, stranger, owners_undo)
    assert restored.status_code == 200, restored.text
    again = Browser(server["base"])
    assert again.post_json("/api/signin/password", {"email": original, "password": PASSWORD}).status_code == 200
    account = again.session.get(server["base"] + "/api/account", timeout=10).json()
    assert account["email"] == original and account["email_verified"] is True
    # The owner's undo retired the attacker's: it cannot move the address back to B.
    replay = post_undo(server, attacker, attackers_undo)
    assert replay.status_code == 400


def recovery_code(server, address, besides=None):
    """The code of the newest recovery mail to `address` whose code is not `besides`."""
    def code_of(message):
        found = re.search(r"^(?:Your code|コード): (\d{8})\s*$", parts(message)[0], re.M)
        return found.group(1) if found else None
    message = server["mailbox"].wait_for(
        address, lambda m: "recovery code" in m["Subject"] and code_of(m) not in (None, besides))
    return code_of(message["message"])


def test_the_address_an_undo_took_back_no_longer_recovers_the_account(server):
    """A thief in the account moves it to the thief's address and, before the owner's undo, asks
    that address for a recovery code and opens a recovery with it, then asks for another code.
    The undo restores the owner's address and ends every session: neither the open recovery nor
    the second code may take the account back."""
    owner = verified_account(server)
    original = owner.email
    thiefs = f"thief-{uuid.uuid4().hex[:10]}@example.com"
    assert change(owner, thiefs).status_code == 202
    text = parts(server["mailbox"].wait_for(thiefs)["message"])[0]
    code = re.search(r"^\s*(\d{6})\s*$", text, re.M).group(1)
    assert owner.post_json("/api/account/email/change/confirm", {"code": code}).status_code == 200
    thief = Browser(server["base"])
    assert thief.post_json("/api/recovery/start", {"email": thiefs}).status_code == 202
    first = recovery_code(server, thiefs)
    opened = thief.post_json("/api/recovery/verify", {"email": thiefs, "code": first})
    assert opened.status_code == 200, opened.text
    assert Browser(server["base"]).post_json("/api/recovery/start", {"email": thiefs}).status_code == 202
    second = recovery_code(server, thiefs, besides=first)

    stranger = Browser(server["base"])
    assert post_undo(server, stranger, undo_fields(server, stranger, original, thiefs)).status_code == 200

    completed = thief.post_json("/api/recovery/password", {"new_password": "the thief's passphrase"})
    assert completed.status_code == 401 and completed.json()["error"] == "recovery_required", completed.text
    again = Browser(server["base"]).post_json("/api/recovery/verify", {"email": thiefs, "code": second})
    assert again.status_code == 400 and again.json()["error"] == "invalid_code", again.text
    assert Browser(server["base"]).post_json(
        "/api/signin/password", {"email": original, "password": PASSWORD}).status_code == 200
    recovered = run_sql(server, "SELECT count(*) FROM audit_events "
                                f"WHERE account_id = '{owner.account_id}' AND event = 'recovery.completed'")
    assert recovered == "0"


def confirm_link(server, address):
    return re.search(r"(http\S+/account/email/confirm\?token=\S+)",
                     parts(server["mailbox"].wait_for(address)["message"])[0]).group(1)


def test_email_change_by_link(server):
    owner = verified_account(server)
    first = f"first-{uuid.uuid4().hex[:10]}@example.com"
    assert change(owner, first).status_code == 202
    stale = confirm_link(server, first)
    # A later request replaces the pending change: the first link confirms nothing any more.
    run_sql(server, f"UPDATE email_changes SET created_at = now() - interval '2 minutes' "
                    f"WHERE account_id = '{owner.account_id}'")
    new = f"link-{uuid.uuid4().hex[:10]}@example.com"
    assert change(owner, new).status_code == 202
    link = confirm_link(server, new)
    assert requests.get(stale, timeout=10).status_code == 400
    assert owner.session.get(server["base"] + "/api/account", timeout=10).json()["email"] == owner.email
    assert requests.get(link, timeout=10).status_code == 200
    assert owner.session.get(server["base"] + "/api/account", timeout=10).json()["email"] == new
    assert requests.get(link, timeout=10).status_code == 400


def test_a_password_change_ends_a_pending_email_change(server):
    """The attack: a thief with the owner's session cookie asks to move the address to theirs.
    The owner, signed in elsewhere, changes the password: every session and token ends. The
    thief's confirmation link needs no session, so it must confirm nothing afterwards (else the
    thief owns the address, and recovery with it gives the account back to them)."""
    owner = verified_account(server)
    thief = Browser(server["base"])
    thief.session.cookies.update(owner.session.cookies)
    theirs = f"thief-{uuid.uuid4().hex[:10]}@example.com"
    assert change(thief, theirs).status_code == 202
    link = confirm_link(server, theirs)
    elsewhere = Browser(server["base"])
    assert elsewhere.post_json("/api/signin/password", {"email": owner.email, "password": PASSWORD}).status_code == 200
    changed = elsewhere.post_json("/api/password", {"current_password": PASSWORD, "new_password": PASSWORD + " anew"})
    assert changed.status_code in (200, 204), changed.text
    assert thief.session.get(server["base"] + "/api/account", timeout=10).status_code == 401
    assert requests.get(link, timeout=10).status_code == 400
    account = elsewhere.session.get(server["base"] + "/api/account", timeout=10).json()
    assert account["email"] == owner.email
    assert run_sql(server, f"SELECT count(*) FROM email_changes WHERE account_id = '{owner.account_id}'") == "0"


def test_email_change_is_throttled_and_needs_a_recent_sign_in(server):
    owner = verified_account(server)
    assert change(owner, f"a-{uuid.uuid4().hex[:8]}@example.com").status_code == 202
    again = change(owner, f"b-{uuid.uuid4().hex[:8]}@example.com")
    assert again.status_code == 429 and again.json()["error"] == "too_many_requests"
    assert int(again.headers["Retry-After"]) > 0
    assert change(owner, owner.email).json()["error"] in ("same_email", "too_many_requests")
    assert change(owner, "not an address").json()["error"] == "invalid_email"
    # Cancelling does not start the interval again: cancel-then-ask cannot mail any address at will.
    cancelled = owner.session.delete(server["base"] + "/api/account/email/change", timeout=10,
                                     headers={"X-CSRF-Token": owner.csrf, "Origin": server["base"]})
    assert cancelled.status_code == 204, cancelled.text
    assert run_sql(server, "SELECT count(*) FROM email_changes "
                           f"WHERE account_id = '{owner.account_id}' AND expires_at > now()") == "0"
    target = f"c-{uuid.uuid4().hex[:8]}@example.com"
    after_cancel = change(owner, target)
    assert after_cancel.status_code == 429 and after_cancel.json()["error"] == "too_many_requests"
    assert run_sql(server, f"SELECT count(*) FROM email_changes WHERE new_normalized_email = '{target}'") == "0"

    # A stolen session without a recent sign-in cannot redirect the account's mail.
    victim = verified_account(server)
    attacker = Browser(server["base"])
    attacker.session.cookies.update(victim.session.cookies)
    age_sign_in(server, victim)
    refused = change(attacker, "attacker@example.net")
    assert refused.status_code == 401 and refused.json()["error"] == "reauthentication_required"
    assert run_sql(server, f"SELECT count(*) FROM email_changes WHERE account_id = '{victim.account_id}'") == "0"


def test_email_change_guesses_are_limited(server):
    owner = verified_account(server)
    new = f"guess-{uuid.uuid4().hex[:8]}@example.com"
    assert change(owner, new).status_code == 202
    code = re.search(r"^\s*(\d{6})\s*$", parts(server["mailbox"].wait_for(new)["message"])[0], re.M).group(1)
    wrong = "000000" if code != "000000" else "111111"
    answers = [owner.post_json("/api/account/email/change/confirm", {"code": wrong}).json()["error"]
               for _ in range(6)]
    assert answers[:5] == ["invalid_code"] * 5 and answers[5] == "code_expired"
    # Even the right code is refused now: a new request is needed.
    assert owner.post_json("/api/account/email/change/confirm", {"code": code}).json()["error"] == "code_expired"
    assert owner.session.get(server["base"] + "/api/account", timeout=10).json()["email"] == owner.email


# MARK: - Export

def test_export_has_every_section_and_no_secret(server):
    owner = verified_account(server)
    register_passkey(owner)
    tokens(server, owner)
    subject = "apple-" + uuid.uuid4().hex
    link_upstream(server, owner, subject)
    response = owner.session.get(server["base"] + "/api/account/export", timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Disposition"].startswith("attachment;")
    assert response.headers["Cache-Control"] == "no-store"
    document = response.json()
    assert set(document) >= {"profile", "email_addresses", "passkeys", "linked_identities", "connected_apps",
                             "sessions", "security_events", "exported_at"}
    assert document["profile"]["email"] == owner.email
    assert document["email_addresses"][0]["verified"] is True
    assert [p["name"] for p in document["passkeys"]] == ["Life key"]
    assert document["connected_apps"][0]["client_id"] == CLIENT
    assert [(i["provider"], i["email"]) for i in document["linked_identities"]] == [
        ("apple", f"{subject}@privaterelay.appleid.com")]
    assert any(s["current"] for s in document["sessions"])
    events = {e["event"] for e in document["security_events"]}
    assert {"account.created", "email.verified", "passkey.added"} <= events
    text = response.text.lower()
    for secret in ["argon2", "password_hash", "digest", "public_key", "sign_count", "token", "salt"]:
        assert secret not in text, secret
    stored = run_sql(server, f"SELECT encode(public_key, 'base64') FROM passkey_credentials "
                             f"WHERE account_id = '{owner.account_id}'").replace("\n", "")
    assert stored and stored[:40] not in response.text
    # Not signed in: nothing.
    assert requests.get(server["base"] + "/api/account/export", timeout=10).status_code == 401
