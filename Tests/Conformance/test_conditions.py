"""The harness's conditions refuse what the suite refuses: each check fed a value the suite's
condition rejects (a token signed by another key, a wrong nonce, audience or issuer, an error
response with extra parameters, a short code) raises, so a PASSED module means something."""

import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from conformance import conditions as c
from conformance.results import ConditionError

ISSUER = "https://op.example"


def signed(claims, key, kid="k1"):
    return c.parse_jwt(jwt.encode(claims, key, algorithm="ES256", headers={"kid": kid}))


def jwks_of(key, kid="k1"):
    return {"keys": [dict(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True), kid=kid, alg="ES256")]}


def good_claims(**changes):
    now = int(time.time())
    claims = {"iss": ISSUER, "sub": "user", "aud": "client", "exp": now + 300, "iat": now, "nonce": "n"}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def test_a_valid_id_token_passes_every_check():
    key = ec.generate_private_key(ec.SECP256R1())
    token = signed(good_claims(), key)
    c.validate_id_token(token, "client", ISSUER)
    c.verify_signature(token, jwks_of(key))
    c.validate_nonce(token, "n")


@pytest.mark.parametrize("changes, message", [
    ({"iss": "https://evil.example"}, "Issuer mismatch"),
    ({"aud": "other"}, "'aud' is not our client id"),
    ({"exp": int(time.time()) - 3600}, "Token expired"),
    ({"iat": int(time.time()) + 3600}, "Token 'iat' in the future"),
    ({"iat": None}, "'iat' claim missing"),
])
def test_validate_id_token_refuses(changes, message):
    token = signed(good_claims(**changes), ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(ConditionError, match=message):
        c.validate_id_token(token, "client", ISSUER)


def test_a_token_signed_by_another_key_or_unsigned_is_refused():
    server_key, attacker_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    with pytest.raises(ConditionError, match="Unable to verify"):
        c.verify_signature(signed(good_claims(), attacker_key), jwks_of(server_key))
    unsigned = c.parse_jwt(jwt.encode(good_claims(), None, algorithm="none"))
    with pytest.raises(ConditionError, match="not signed"):
        c.verify_signature(unsigned, jwks_of(server_key))


def test_nonce_mismatch_and_unexpected_nonce_are_refused():
    token = signed(good_claims(nonce="other"), ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(ConditionError, match="Nonce values mismatch"):
        c.validate_nonce(token, "n")


def test_error_response_checks():
    c.check_error_params({"error": "login_required", "state": "s", "iss": ISSUER})
    with pytest.raises(ConditionError, match="unexpected parameters"):
        c.check_error_params({"error": "login_required", "code": "x"})
    with pytest.raises(ConditionError, match="invalid character"):
        c.error_description_charset({"error_description": "bad \"quote\""})
    with pytest.raises(ConditionError, match="CR, LF or TAB"):
        c.error_description_no_crlftab({"error_description": "line\nbreak"})


def test_code_length_and_entropy():
    c.ensure_min_entropy("73vRFfbgcM2uklrkFNzsplVMz9lbqnEtuk9z9o69J20", "code")
    with pytest.raises(ConditionError, match="entropy"):
        c.ensure_min_entropy("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "code")
    with pytest.raises(ConditionError, match="not long enough"):
        c.ensure_min_length("short", "Authorization code")


def test_discovery_checks():
    with pytest.raises(ConditionError, match="not a valid https URL"):
        c.all_endpoints_https({"token_endpoint": "http://op.example/token"})
    with pytest.raises(ConditionError, match="not consistent"):
        c.disc_issuer({"issuer": "https://other.example"}, ISSUER + "/.well-known/openid-configuration")
    with pytest.raises(ConditionError, match="members the suite does not know"):
        c.no_unexpected_metadata({"issuer": ISSUER, "made_up_metadata": True})


def test_id_token_claims_checks():
    with pytest.raises(ConditionError, match="non-requested claims"):
        c.ensure_no_non_requested_claims({"sub": "u", "email": "a@example.com"}, "openid")
    c.ensure_no_non_requested_claims({"sub": "u", "email": "a@example.com"}, "openid email")
    with pytest.raises(ConditionError, match="not valid"):
        c.validate_standard_claims({"email_verified": "yes"}, "userinfo")
    with pytest.raises(ConditionError, match="prior to the year 1990"):
        c.updated_at_valid({"updated_at": 0}, "userinfo")
