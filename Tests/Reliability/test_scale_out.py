"""Two `auth-server serve` instances behind nginx (round robin) with one PostgreSQL: every flow
works whichever instance serves each request, a key rotation reaches both instances, and
sign-in throttling counts failures across them."""

import base64
import json
import re
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from browser_flows import NO_CONDITIONAL_UI, sign_up_with_passkey, start_code_flow_with_passkey, wait
from conftest import THROTTLE_FAILURES, binary

# The signing-key ring reloads at least every 60 s (SigningKeyRing's refresh interval).
KEY_REFRESH_SECONDS = 60
ROTATION = {}


def fetch(url, data=None, headers=None, method=None):
    """(status, headers, body) without raising for 4xx/5xx."""
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def request_counts(instance):
    """Requests an instance served, by route, from its own /metrics (health and metrics excluded)."""
    _, _, body = fetch(f"{instance.base}/metrics")
    counts = {}
    for line in body.decode().splitlines():
        match = re.match(r'http_requests_total\{method="(\w+)",route="([^"]*)",status="(\d+)"\} (\d+)', line)
        if match and match.group(2) not in ("/readyz", "/metrics", "/healthz", "/jwks"):
            key = (match.group(1), match.group(2))
            counts[key] = counts.get(key, 0) + int(match.group(4))
    return counts


def served(before, after):
    return sum(after.values()) - sum(before.values())


class Browserless:
    """A cookie-keeping JSON client through nginx, recording which instance answered."""

    def __init__(self, base):
        self.base = base
        self.cookies = {}
        self.upstreams = []
        status, headers, body = self.call("GET", "/api/csrf")
        self.csrf = json.loads(body)["csrf_token"]

    def call(self, method, path, payload=None):
        headers = {"Origin": self.base}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = None
        if payload is not None:
            headers["Content-Type"] = "application/json"
            headers["X-CSRF-Token"] = self.csrf
            data = json.dumps(payload).encode()
        status, response_headers, body = fetch(self.base + path, data=data, headers=headers, method=method)
        for cookie in response_headers.get_all("Set-Cookie") or []:
            name, _, rest = cookie.partition("=")
            self.cookies[name] = rest.split(";", 1)[0]
        self.upstreams.append(response_headers.get("X-Upstream"))
        return status, response_headers, body


def test_consecutive_requests_land_on_both_instances_and_a_rotation_starts(scale_out):
    upstreams = [fetch(scale_out["base"] + "/healthz")[1].get("X-Upstream") for _ in range(6)]
    ports = {instance.port for instance in scale_out["instances"].values()}
    assert {u.rsplit(":", 1)[1] for u in upstreams} == ports
    # Consecutive requests alternate: round robin.
    assert all(a != b for a, b in zip(upstreams, upstreams[1:]))

    # Rotate now; both instances must publish the new key within their refresh interval.
    result = subprocess.run(
        [binary(), "keys", "rotate", "--config", str(scale_out["config_path"]), "--algorithm", "ES256"],
        env=scale_out["environment"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("added ES256 key ")
    ROTATION["kid"] = result.stdout.split()[3].rstrip(",")
    ROTATION["at"] = time.monotonic()


def test_passkey_sign_up_sign_in_code_flow_and_logout_through_the_balancer(driver, scale_out, rp, artifacts):
    base = scale_out["base"]
    instances = scale_out["instances"]
    before = {name: request_counts(instance) for name, instance in instances.items()}
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_CONDITIONAL_UI})

    # Passkey sign-up.
    email = f"scale-{uuid.uuid4().hex[:8]}@example.com"
    sign_up_with_passkey(driver, base, email, "Scale Out")

    # Passkey sign-in (modal), then the code flow with PKCE for the first-party native client.
    verifier, state, nonce = start_code_flow_with_passkey(driver, base, "scale-app", f"{rp.base}/callback")
    wait(driver).until(lambda d: d.current_url.startswith(f"{rp.base}/callback"))
    driver.save_screenshot(str(artifacts / "scale-out-callback.png"))
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(driver.current_url).query))
    assert query["state"] == state and query["iss"] == base

    status, _, body = fetch(f"{base}/token", data=urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": query["code"], "redirect_uri": f"{rp.base}/callback",
        "code_verifier": verifier, "client_id": "scale-app",
    }).encode())
    assert status == 200, body
    tokens = json.loads(body)
    payload = tokens["id_token"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["nonce"] == nonce and claims["iss"] == base
    # The access token works at /userinfo on whichever instance answers, several times.
    for _ in range(4):
        status, _, body = fetch(f"{base}/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"})
        assert status == 200 and json.loads(body)["email"] == email

    # RP-initiated logout ends the session everywhere.
    driver.get(f"{base}/logout?" + urllib.parse.urlencode({
        "id_token_hint": tokens["id_token"], "post_logout_redirect_uri": f"{rp.base}/signed-out", "state": "bye",
    }))
    wait(driver).until(lambda d: d.current_url.startswith(f"{rp.base}/signed-out"))
    for _ in range(2):
        driver.get(f"{base}/account")
        wait(driver).until(lambda d: "/signin" in d.current_url)

    # Both instances took part in the flow.
    after = {name: request_counts(instance) for name, instance in instances.items()}
    for name in instances:
        assert served(before[name], after[name]) > 0, f"instance {name} served none of the flow"


def test_sign_in_throttling_holds_across_instances(scale_out):
    base = scale_out["base"]
    email = f"throttle-{uuid.uuid4().hex[:8]}@example.com"
    owner = Browserless(base)
    status, _, body = owner.call("POST", "/api/signup/password",
                                 {"email": email, "display_name": "T", "password": "a long passphrase"})
    assert status == 201, body
    guesser = Browserless(base)
    guesser.upstreams.clear()
    for attempt in range(THROTTLE_FAILURES):
        status, _, body = guesser.call("POST", "/api/signin/password", {"email": email, "password": f"guess {attempt}"})
        assert status == 401, body
    assert len(set(guesser.upstreams)) == 2, "the failures were spread over both instances"
    # The next attempts are refused on either instance, even with the right password.
    for _ in range(2):
        status, headers, body = guesser.call("POST", "/api/signin/password", {"email": email, "password": "a long passphrase"})
        assert status == 429, body
        assert int(headers["Retry-After"]) > 0
    assert len(set(guesser.upstreams[-2:])) == 2, "both instances refused"


def test_a_rotated_key_is_published_by_both_instances_within_the_refresh_interval(scale_out):
    kid = ROTATION.get("kid")
    assert kid, "the rotation test ran first"
    deadline = ROTATION["at"] + KEY_REFRESH_SECONDS + 15
    pending = dict(scale_out["instances"])
    while pending and time.monotonic() < deadline:
        for name, instance in list(pending.items()):
            status, _, body = fetch(f"{instance.base}/jwks")
            if status == 200 and kid in {key.get("kid") for key in json.loads(body)["keys"]}:
                del pending[name]
        if pending:
            time.sleep(1)
    assert not pending, f"instances without the new key: {sorted(pending)}"
