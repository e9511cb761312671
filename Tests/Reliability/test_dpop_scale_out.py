"""DPoP proofs are used once across every instance (RFC 9449 §11.1): two `auth-server serve`
instances behind nginx share the replay cache in PostgreSQL, so a proof captured from one
instance's traffic is refused by the other."""

import json
import secrets
import urllib.error
import urllib.parse
import urllib.request

from dpop_client import DPoPKey


def token_request(url, dpop, rp):
    """A code redemption with a code nobody issued: the proof is checked and recorded first."""
    body = urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": secrets.token_urlsafe(32), "client_id": "scale-app",
        "redirect_uri": f"{rp.base}/callback", "code_verifier": secrets.token_urlsafe(48),
    }).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded", "DPoP": dpop})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read())


def test_a_proof_used_at_one_instance_is_refused_by_the_other(scale_out, rp):
    key = DPoPKey()
    token_endpoint = scale_out["base"] + "/token"
    a, b = scale_out["instances"]["a"], scale_out["instances"]["b"]
    captured = key.proof("POST", token_endpoint)
    # The app's request reaches instance a: the proof is fine, the code is not.
    status, _, body = token_request(a.base + "/token", captured, rp)
    assert (status, body["error"]) == (400, "invalid_grant"), (a.base, body, a.log_path.read_text()[-2000:])
    # The attacker replays the proof at instance b.
    status, _, body = token_request(b.base + "/token", captured, rp)
    assert (status, body["error"]) == (400, "invalid_dpop_proof"), (b.base, body, b.log_path.read_text()[-2000:])
    assert "already used" in body["error_description"]
    # Through the balancer, consecutive requests land on both instances; the second is refused.
    captured = key.proof("POST", token_endpoint)
    first_status, first_headers, first = token_request(token_endpoint, captured, rp)
    second_status, second_headers, second = token_request(token_endpoint, captured, rp)
    seen = [(first_headers["X-Upstream"], first_status, first), (second_headers["X-Upstream"], second_status, second)]
    assert first_headers["X-Upstream"] != second_headers["X-Upstream"], seen
    assert (first_status, first["error"]) == (400, "invalid_grant"), seen
    assert (second_status, second["error"]) == (400, "invalid_dpop_proof"), seen
