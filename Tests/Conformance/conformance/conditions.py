"""The suite's conditions (net.openid.conformance.condition.*), one function each, named after
the Java class. A condition raises ConditionError with the suite's message when it does not
hold; the caller (a module) decides the severity, as the suite's callAndContinueOnFailure /
callAndStopOnFailure do."""

import base64
import hashlib
import json
import math
import re
import time
import urllib.parse

import jwt
from jwt.algorithms import get_default_algorithms

from .results import ConditionError

SKEW = 5 * 60  # the suite's allowed clock skew, seconds

SCOPE_STANDARD_CLAIMS = {
    "openid": ["sub"],
    "profile": ["name", "given_name", "family_name", "middle_name", "nickname", "profile", "picture", "website",
                "gender", "birthdate", "zoneinfo", "locale", "updated_at", "preferred_username"],
    "email": ["email", "email_verified"],
    "address": ["address"],
    "phone": ["phone_number", "phone_number_verified"],
    "offline_access": [],
}

ID_TOKEN_VALID_CLAIMS = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "at_hash",
                         "c_hash", "nbf", "jti", "sid", "s_hash", "openbanking_intent_id", "txn"]

ID_TOKEN_NON_IDENTITY_CLAIMS = ["iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "c_hash",
                                "at_hash", "s_hash", "jti", "nbf", "verified_claims"]

# json-schemas/rfc8414/oauth_authorization_server_metadata.json: its properties
# (additionalProperties: false), for CheckForUnexpectedParametersInServerMetadata.
SERVER_METADATA_PROPERTIES = {
    "acr_values_supported", "attachments_supported", "authorization_challenge_endpoint",
    "authorization_details_types_supported", "authorization_encryption_alg_values_supported",
    "authorization_encryption_enc_values_supported", "authorization_endpoint",
    "authorization_response_iss_parameter_supported", "authorization_signing_alg_values_supported",
    "backchannel_authentication_endpoint", "backchannel_authentication_request_signing_alg_values_supported",
    "backchannel_logout_session_supported", "backchannel_logout_supported", "backchannel_token_delivery_modes_supported",
    "backchannel_user_code_parameter_supported", "challenge_endpoint", "check_session_iframe", "claim_types_supported",
    "claims_in_verified_claims_supported", "claims_locales_supported", "claims_parameter_supported", "claims_supported",
    "client_attestation_pop_signing_alg_values_supported", "client_attestation_signing_alg_values_supported",
    "client_id_metadata_document_supported", "client_registration_types_supported", "code_challenge_methods_supported",
    "contacts", "description", "device_authorization_endpoint", "display_name", "display_values_supported",
    "documents_check_methods_supported", "documents_methods_supported", "documents_supported",
    "dpop_signing_alg_values_supported", "electronic_records_supported", "end_session_endpoint", "evidence_supported",
    "federation_registration_endpoint", "frontchannel_logout_session_supported", "frontchannel_logout_supported",
    "global_token_revocation_endpoint", "global_token_revocation_endpoint_auth_methods_supported",
    "grant_management_action_required", "grant_management_actions_supported", "grant_management_endpoint",
    "grant_types_supported", "id_token_encryption_alg_values_supported", "id_token_encryption_enc_values_supported",
    "id_token_signing_alg_values_supported", "information_uri", "introspection_encryption_alg_values_supported",
    "introspection_encryption_enc_values_supported", "introspection_endpoint",
    "introspection_endpoint_auth_methods_supported", "introspection_endpoint_auth_signing_alg_values_supported",
    "introspection_signing_alg_values_supported", "issuer", "jwks", "jwks_uri", "keywords", "logo_uri",
    "mtls_endpoint_aliases", "op_policy_uri", "op_tos_uri", "organization_name", "organization_uri",
    "pre-authorized_grant_anonymous_access_supported", "prompt_values_supported", "protected_resources",
    "pushed_authorization_request_endpoint", "registration_endpoint", "request_authentication_methods_supported",
    "request_authentication_signing_alg_values_supported", "request_object_encryption_alg_values_supported",
    "request_object_encryption_enc_values_supported", "request_object_signing_alg_values_supported",
    "request_parameter_supported", "request_uri_parameter_supported", "require_pushed_authorization_requests",
    "require_request_uri_registration", "require_signed_request_object", "response_modes_supported",
    "response_types_supported", "revocation_endpoint", "revocation_endpoint_auth_methods_supported",
    "revocation_endpoint_auth_signing_alg_values_supported", "scopes_supported", "service_documentation",
    "signed_jwks_uri", "signed_metadata", "status_list_aggregation_endpoint", "subject_types_supported",
    "tls_client_certificate_bound_access_tokens", "token_endpoint", "token_endpoint_auth_methods_supported",
    "token_endpoint_auth_signing_alg_values_supported", "transformed_claims_functions_supported",
    "transformed_claims_predefined", "trust_frameworks_supported", "ui_locales_supported",
    "userinfo_encryption_alg_values_supported", "userinfo_encryption_enc_values_supported", "userinfo_endpoint",
    "userinfo_signing_alg_values_supported",
}


def fail(message, **details):
    if details:
        message += " " + json.dumps(details, default=str, sort_keys=True)[:400]
    raise ConditionError(message)


# --- JWTs -------------------------------------------------------------------------------------

def b64url_decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def parse_jwt(value, what="id_token"):
    """ExtractIdTokenFromTokenResponse / ExtractLogoutTokenFromBackchannelLogoutRequest: a
    compact JWS with three parts, JSON header and claims."""
    if not isinstance(value, str) or not value:
        fail(f"Couldn't find {what}")
    parts = value.split(".")
    if len(parts) != 3:
        fail(f"Couldn't parse {what} as a JWT", value=value[:80])
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
    except ValueError as error:
        fail(f"Couldn't parse {what} as a JWT: {error}")
    if not isinstance(claims, dict):
        fail(f"{what} claims are not a JSON object")
    return {"value": value, "header": header, "claims": claims}


def verify_signature(token, jwks, what="id_token"):
    """ValidateIdTokenSignature / ValidateLogoutTokenSignature: signed by a key of the
    server's JWKS (chosen by kid), with the header's algorithm, never 'none'."""
    alg = token["header"].get("alg")
    if alg in (None, "none"):
        fail(f"{what} is not signed", alg=alg)
    kid = token["header"].get("kid")
    candidates = [k for k in jwks.get("keys", []) if kid is None or k.get("kid") == kid]
    if not candidates:
        fail(f"Unable to find a key in the server JWKS with the kid of the {what}", kid=kid)
    for key in candidates:
        try:
            jwt.PyJWS().decode_complete(token["value"], key=jwt.PyJWK(key, algorithm=alg).key, algorithms=[alg])
            return True
        except Exception:  # noqa: BLE001 - any failure means this key does not verify
            continue
    fail(f"Unable to verify {what} signature based on server key", kid=kid, alg=alg)


HASH_FOR_ALG = {"RS256": hashlib.sha256, "PS256": hashlib.sha256, "ES256": hashlib.sha256, "HS256": hashlib.sha256,
                "RS384": hashlib.sha384, "PS384": hashlib.sha384, "ES384": hashlib.sha384,
                "RS512": hashlib.sha512, "PS512": hashlib.sha512, "ES512": hashlib.sha512, "EdDSA": hashlib.sha512}


def left_half_hash(value, alg):
    digest = HASH_FOR_ALG[alg](value.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode()


def validate_hash(token, claim, value):
    """ValidateAtHash / ValidateCHash (OIDCC 3.3.2.11)."""
    alg = token["header"].get("alg")
    if alg not in HASH_FOR_ALG:
        fail(f"Unsupported algorithm for {claim}", alg=alg)
    expected = left_half_hash(value, alg)
    if token["claims"].get(claim) != expected:
        fail(f"{claim} does not match", expected=expected, actual=token["claims"].get(claim))


# --- ID token ---------------------------------------------------------------------------------

def validate_id_token(token, client_id, issuer, now=None):
    """ValidateIdToken (OIDCC 3.1.3.7)."""
    now = now or time.time()
    claims = token["claims"]
    if "iss" not in claims:
        fail("'iss' claim missing")
    if claims["iss"] != issuer:
        fail("Issuer mismatch", expected=issuer, actual=claims["iss"])
    aud = claims.get("aud")
    if aud is None:
        fail("'aud' claim missing")
    if isinstance(aud, list):
        if client_id not in aud:
            fail("'aud' array does not contain our client id", expected=client_id, actual=aud)
    elif aud != client_id:
        fail("'aud' is not our client id", expected=client_id, actual=aud)
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)):
        fail("'exp' claim missing")
    if now - SKEW > exp:
        fail("Token expired", exp=exp)
    if exp > now + 50 * 365 * 86400:
        fail("'exp' is unreasonably far in the future (more than 50 years)", exp=exp)
    iat = claims.get("iat")
    if not isinstance(iat, (int, float)):
        fail("'iat' claim missing")
    if now + SKEW < iat:
        fail("Token 'iat' in the future", iat=iat)
    if now - SKEW > iat:
        fail("Token 'iat' more than 5 minutes in the past", iat=iat)
    auth_time = claims.get("auth_time")
    if auth_time is not None:
        if now - 365 * 86400 > auth_time:
            fail("id_token auth_time is over a year in the past", auth_time=auth_time)
        if now + SKEW < auth_time:
            fail("id_token auth_time is in the future", auth_time=auth_time)
    if claims.get("acr") == "":
        fail("id_token acr is an empty string")


def _is_string(value):
    return isinstance(value, str) and value.strip() != "" and value.lower() != "null"


def _is_birthdate(value):
    if not _is_string(value):
        return False
    if re.fullmatch(r"\d{4}", value):
        return 1850 <= int(value) <= time.gmtime().tm_year
    match = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", value)
    if not match:
        return False
    year, month, day = (int(g) for g in match.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return False
    return year == 0 or 1850 <= year <= time.gmtime().tm_year


_ADDRESS = {k: _is_string for k in ("formatted", "street_address", "locality", "region", "postal_code", "country")}
STANDARD_CLAIMS = {
    **{k: _is_string for k in ("sub", "name", "given_name", "family_name", "middle_name", "nickname",
                               "preferred_username", "profile", "picture", "website", "email", "gender", "zoneinfo",
                               "locale", "phone_number", "txn")},
    "email_verified": lambda v: isinstance(v, bool), "phone_number_verified": lambda v: isinstance(v, bool),
    "birthdate": _is_birthdate,
    "address": lambda v: isinstance(v, dict) and all(_ADDRESS[k](x) for k, x in v.items() if k in _ADDRESS),
    "updated_at": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "_claim_names": lambda v: isinstance(v, dict), "_claim_sources": lambda v: isinstance(v, dict),
}


def validate_standard_claims(claims, where):
    """ValidateIdTokenStandardClaims / ValidateUserInfoStandardClaims (OIDCC 5.1): every
    standard claim present has the type the specification gives it."""
    invalid = {k: v for k, v in claims.items() if k in STANDARD_CLAIMS and not STANDARD_CLAIMS[k](v)}
    if invalid:
        fail(f"{where} claims are not valid", invalid=invalid)


def id_token_identity_claims(claims):
    return {k: v for k, v in claims.items() if k not in ID_TOKEN_NON_IDENTITY_CLAIMS}


def validate_nonce(token, expected):
    """ValidateIdTokenNonce (OIDCC 2)."""
    incoming = token["claims"].get("nonce")
    if incoming is None and expected is None:
        return
    if incoming != expected:
        fail("Nonce values mismatch", actual=incoming, expected=expected)


def validate_acr_against_request(token, request):
    """ValidateIdTokenACRClaimAgainstRequest (OIDCC 5.5.1.1)."""
    acr = token["claims"].get("acr")
    if acr is not None and not isinstance(acr, str):
        fail("acr value in id_token must be a string")
    claims = request.get("claims")
    if isinstance(claims, str):
        claims = json.loads(claims)
    requested = ((claims or {}).get("id_token") or {}).get("acr") or {}
    values = requested.get("values") or ([requested["value"]] if "value" in requested else [])
    if not values:
        return
    if acr is None:
        fail("One or more acr values were requested as an 'essential: true' claim so, as the authentication "
             "succeeded, the acr used MUST be returned in the id_token", expected=values)
    if acr not in values:
        fail("acr value in id_token is not (one of the) requested values", requested=values, actual=acr)


def check_subject(claims):
    """CheckForSubjectInIdToken / EnsureUserInfoContainsSub."""
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        fail("'sub' claim is missing or not a non-empty string", sub=sub)


def updated_at_valid(claims, where):
    """EnsureIdTokenUpdatedAtValid / EnsureUserInfoUpdatedAtValid (OIDCC 5.1)."""
    updated_at = claims.get("updated_at")
    if updated_at is None:
        return
    if not isinstance(updated_at, (int, float)) or isinstance(updated_at, bool):
        fail(f"updated_at in {where} is not a number", updated_at=updated_at)
    if time.time() + SKEW < updated_at:
        fail(f"updated_at in {where} appears to be in the future", updated_at=updated_at)
    if updated_at < 631152000:
        fail(f"updated_at in {where} appears to be prior to the year 1990", updated_at=updated_at)


def ensure_no_name(claims, where):
    """EnsureIdTokenDoesNotContainName / EnsureUserInfoDoesNotContainName (OIDCC 5.5)."""
    if "name" in claims:
        fail(f"{where} contains the 'name' claim, which was not requested", name=claims["name"])


def ensure_id_token_no_email(claims):
    """EnsureIdTokenDoesNotContainEmailForScopeEmail (OIDCC 5.4)."""
    if "email" in claims:
        fail("email was requested with the scope, so it should be returned from the userinfo endpoint, "
             "not in the id_token", email=claims["email"])


def ensure_no_non_requested_claims(claims, scope):
    """EnsureIdTokenDoesNotContainNonRequestedClaims."""
    valid = list(ID_TOKEN_VALID_CLAIMS)
    scopes = scope.split(" ")
    if "openid" in scopes:
        for value in scopes:
            valid += SCOPE_STANDARD_CLAIMS.get(value, [])
    extra = sorted(k for k in claims if k not in valid)
    if extra:
        fail("id_token contains non-requested claims. This may indicate the authorization server is returning data "
             "about the user that it should not, or that a specification has been wrongly implemented", extra=extra)


def verify_scopes_in_claims(claims, scope, where):
    """VerifyScopesReturnedInUserInfoClaims (OIDCC 5.4)."""
    expected = []
    for value in scope.split(" "):
        expected += SCOPE_STANDARD_CLAIMS.get(value, [])
    missing = sorted(set(expected) - set(claims))
    if missing:
        fail(f"'claims' in {where} doesn't contain all scope items of scope in authorization request "
             "(corresponds to scope standard claims)", missing_items=missing)


def claim_names_reference_sources(claims):
    """EnsureMemberValuesInClaimNameReferenceToMemberNamesInClaimSources (OIDCC 5.6.2)."""
    names = claims.get("_claim_names")
    if names is None:
        return
    sources = claims.get("_claim_sources") or {}
    missing = [v for v in names.values() if v not in sources]
    if missing:
        fail("_claim_names refers to members not in _claim_sources", missing=missing)


# --- authorization endpoint -------------------------------------------------------------------

def shannon_entropy_bits(value):
    counts = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    per_char = -sum((n / len(value)) * math.log2(n / len(value)) for n in counts.values())
    return per_char * len(value)


def ensure_min_entropy(value, what, required=96):
    """EnsureMinimumAuthorizationCodeEntropy / EnsureMinimumRefreshTokenEntropy /
    EnsureMinimumAccessTokenEntropy (RFC 6749 10.10, RFC 6819 5.1.4.2.2)."""
    if not value:
        fail(f"Can't find {what}")
    bits = shannon_entropy_bits(value)
    if not bits > required:
        fail("Calculated shannon entropy does not seem to meet minimum required entropy", expected=required,
             actual=bits)


def ensure_min_length(value, what, bits=128):
    """EnsureMinimumAuthorizationCodeLength / EnsureMinimumRefreshTokenLength."""
    if not value:
        fail(f"Can't find {what}")
    if len(value.encode()) * 8 < bits:
        fail(f"{what} is not long enough", required_bits=bits, actual_bits=len(value.encode()) * 8)


ERROR_PARAMS = ["error", "error_description", "error_uri", "state", "session_state", "iss"]


def check_error_params(params):
    """CheckForUnexpectedParametersInErrorResponseFromAuthorizationEndpoint (OIDCC 3.1.2.6)."""
    if "error" not in params:
        fail("Authorization server was expected to return an error but did not", params=params)
    unexpected = {k: v for k, v in params.items() if k not in ERROR_PARAMS}
    if unexpected:
        fail("error response includes unexpected parameters", unexpected=unexpected)


def error_description_no_crlftab(params):
    """CheckErrorDescriptionFrom…ContainsCRLFTAB (RFC 6749 4.1.2.1, 5.2)."""
    description = params.get("error_description")
    if description is not None and re.search(r"[\r\n\t]", description):
        fail("error_description contains CR, LF or TAB characters", error_description=description)


def error_description_charset(params):
    """ValidateErrorDescriptionFrom…Error: %x20-21 / %x23-5B / %x5D-7E only."""
    description = params.get("error_description")
    if description is None:
        return
    if not isinstance(description, str) or re.search(r"[^\x20-\x21\x23-\x5B\x5D-\x7E]", description):
        fail("'error_description' field includes an invalid character", error_description=description)


def error_uri_valid(params):
    """ValidateErrorUriFrom…Error: a URI of %x21 / %x23-5B / %x5D-7E characters."""
    uri = params.get("error_uri")
    if uri is None:
        return
    if not isinstance(uri, str) or re.search(r"[^\x21\x23-\x5B\x5D-\x7E]", uri) or not urllib.parse.urlsplit(uri).scheme:
        fail("'error_uri' field is not a valid URI", error_uri=uri)


def error_code_valid(params):
    """ValidateErrorFromTokenEndpointResponseError: error present, %x20-21 / %x23-5B / %x5D-7E."""
    error = params.get("error")
    if not isinstance(error, str) or not error:
        fail("'error' field is missing or not a string", response=params)
    if re.search(r"[^\x20-\x21\x23-\x5B\x5D-\x7E]", error):
        fail("'error' field includes an invalid character", error=error)


# --- JWKS -------------------------------------------------------------------------------------

PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "oth", "k")


def jwks_no_private(jwks):
    """EnsureJwksHasNoPrivateOrSymmetricKeyMaterial (RFC 7517 1.1)."""
    bad = [k.get("kid") for k in jwks.get("keys", []) if any(m in k for m in PRIVATE_MEMBERS) or k.get("kty") == "oct"]
    if bad:
        fail("The server JWKS contains private or symmetric key material", kids=bad)


def jwks_structure(jwks):
    """ValidateJwksStructure: an object with a 'keys' array of objects, each with 'kty'."""
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
        fail("JWKS does not have a 'keys' array")
    for key in jwks["keys"]:
        if not isinstance(key, dict) or not isinstance(key.get("kty"), str):
            fail("A JWK has no 'kty'", key=key)


def jwks_parse_keys(jwks):
    """ParseUsableJwksKeys / CheckServerKeysIsValid: every key parses."""
    for key in jwks.get("keys", []):
        try:
            jwt.PyJWK(key)
        except Exception as error:  # noqa: BLE001
            fail(f"Unable to parse JWK: {error}", kid=key.get("kid"))


def jwks_usable(jwks):
    """WarnOnUnusableJwksKeys: every key has an algorithm this client can use."""
    known = get_default_algorithms()
    unusable = [k.get("kid") for k in jwks.get("keys", []) if k.get("alg") is not None and k.get("alg") not in known]
    if unusable:
        fail("JWKS contains keys with algorithms that cannot be used", kids=unusable)


def jwks_have_kids(jwks):
    """CheckForKeyIdInServerJWKs (OIDCC 10.1)."""
    missing = [k for k in jwks.get("keys", []) if not k.get("kid")]
    if missing:
        fail("Server JWKS contains keys without a 'kid'")


def jwks_distinct_kids(jwks):
    """CheckDistinctKeyIdValueInServerJWKs (RFC 7517 4.5)."""
    kids = [k.get("kid") for k in jwks.get("keys", []) if k.get("kid")]
    if len(kids) != len(set(kids)):
        fail("Distinct 'kid' value in key set", kids=kids)


# --- discovery --------------------------------------------------------------------------------

def https_url(value, what):
    """AbstractJsonUriIsValidAndHttps."""
    if not isinstance(value, str):
        fail(f"{what} is missing or not a string", value=value)
    parts = urllib.parse.urlsplit(value)
    if parts.scheme != "https" or not parts.netloc:
        fail(f"{what} is not a valid https URL", value=value)
    if parts.fragment:
        fail(f"{what} contains a fragment", value=value)


def all_endpoints_https(server):
    """CheckDiscEndpointAllEndpointsAreHttps."""
    for key, value in server.items():
        if key.endswith("_endpoint"):
            https_url(value, key)


def check_server_configuration(server):
    """CheckServerConfiguration: authorization_endpoint, token_endpoint and issuer are strings."""
    for key in ("authorization_endpoint", "token_endpoint", "issuer"):
        if not isinstance(server.get(key), str) or not server[key]:
            fail(f"Couldn't find required component {key}", server=server)


def metadata_schema(server):
    """ValidateServerMetadataAgainstSchema (RFC 8414 2, OIDC Discovery 3): the types of the
    members the schema describes."""
    problems = {}
    for key, value in server.items():
        if key.endswith("_supported") and key not in ("claims_parameter_supported", "request_parameter_supported",
                                                      "request_uri_parameter_supported", "backchannel_logout_supported",
                                                      "backchannel_logout_session_supported",
                                                      "frontchannel_logout_supported",
                                                      "frontchannel_logout_session_supported",
                                                      "authorization_response_iss_parameter_supported",
                                                      "backchannel_user_code_parameter_supported",
                                                      "client_id_metadata_document_supported",
                                                      "pre-authorized_grant_anonymous_access_supported"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                problems[key] = "must be an array of strings"
        elif key.endswith("_supported") or key.startswith("require_") or key == "tls_client_certificate_bound_access_tokens":
            if not isinstance(value, bool):
                problems[key] = "must be a boolean"
        elif key.endswith("_endpoint") or key.endswith("_uri") or key == "issuer":
            if not isinstance(value, str):
                problems[key] = "must be a string"
    if problems:
        fail("Server metadata does not match the schema", problems=problems)


def no_unexpected_metadata(server):
    """CheckForUnexpectedParametersInServerMetadata (WARNING in the suite)."""
    unexpected = sorted(k for k in server if k not in SERVER_METADATA_PROPERTIES)
    if unexpected:
        fail("Server metadata contains members the suite does not know", unexpected=unexpected)


def response_types_supported_basic(server):
    """OIDCCCheckDiscEndpointResponseTypesSupported (static clients): at least one of the
    response types OpenID Connect defines."""
    values = server.get("response_types_supported")
    if not isinstance(values, list):
        fail("response_types_supported is missing or not an array")
    defined = {"code", "code id_token", "id_token", "token id_token", "code id_token token", "code token"}
    if not any(v in defined for v in values):
        fail("The server must support at least one of the response types defined in OpenID Connect.", actual=values)


def disc_issuer(server, discovery_url):
    """CheckDiscEndpointIssuer (OIDC Discovery 4.3): the issuer is where the document was
    fetched from, less /.well-known/openid-configuration (trailing slashes ignored)."""
    issuer = server.get("issuer")
    if not isinstance(issuer, str):
        fail("issuer is missing from discovery endpoint document")
    expected = discovery_url
    if expected.endswith(".well-known/openid-configuration"):
        expected = expected[: -len(".well-known/openid-configuration")]
    if issuer.rstrip("/") != expected.rstrip("/"):
        fail("issuer listed in the discovery document is not consistent with the location the discovery document "
             "was retrieved from", issuer=issuer, discovery_url=discovery_url)


def disc_discovery_url(discovery_url):
    """CheckDiscEndpointDiscoveryUrl: ends in /.well-known/openid-configuration."""
    if not discovery_url.endswith("/.well-known/openid-configuration"):
        fail("discoveryUrl does not end in /.well-known/openid-configuration", discovery_url=discovery_url)


def disc_issuer_valid_url(server):
    """CheckDiscEndpointIssuerIsValidUrl (RFC 8414 2): https, no query, no fragment."""
    issuer = server.get("issuer")
    https_url(issuer, "issuer")
    parts = urllib.parse.urlsplit(issuer)
    if parts.query:
        fail("issuer contains a query", issuer=issuer)


def disc_subject_types(server):
    """CheckDiscEndpointSubjectTypesSupported."""
    values = server.get("subject_types_supported")
    if not isinstance(values, list) or not values or not all(v in ("public", "pairwise") for v in values):
        fail("subject_types_supported is missing or has unexpected values", actual=values)


def disc_id_token_algs(server):
    """OIDCCCheckDiscEndpointIdTokenSigningAlgValuesSupported: contains RS256."""
    values = server.get("id_token_signing_alg_values_supported")
    if not isinstance(values, list) or "RS256" not in values:
        fail("id_token_signing_alg_values_supported does not contain RS256", actual=values)


def disc_userinfo_algs(server):
    values = server.get("userinfo_signing_alg_values_supported")
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        fail("userinfo_signing_alg_values_supported is not an array of strings", actual=values)


def disc_claims_supported(server):
    """OIDCCCheckDiscEndpointClaimsSupported: present and an array of strings."""
    values = server.get("claims_supported")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        fail("claims_supported is missing or not an array of strings", actual=values)


def disc_grant_types(server):
    """OIDCCCheckDiscEndpointGrantTypesSupported (static): if present, a non-empty array."""
    values = server.get("grant_types_supported")
    if values is None:
        return
    if not isinstance(values, list):
        fail("grant_types_supported in discovery document, if present, must be an array.", actual=values)
    if not values:
        fail("grant_types_supported in discovery document must not be an empty array.")


def disc_scopes_contain_openid(server):
    if "openid" not in (server.get("scopes_supported") or []):
        fail("scopes_supported does not contain 'openid'", actual=server.get("scopes_supported"))


def disc_scopes_syntax(server):
    """CheckDiscEndpointScopesSupportedSyntax (RFC 6749 3.3): scope-tokens only."""
    for value in server.get("scopes_supported") or []:
        if not isinstance(value, str) or not re.fullmatch(r"[\x21\x23-\x5B\x5D-\x7E]+", value):
            fail("scopes_supported contains a value that is not a valid scope-token", value=value)


LOCALE = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")


def disc_locales_syntax(server):
    """CheckDiscEndpointLocalesSyntax: BCP 47 language tags."""
    for key in ("ui_locales_supported", "claims_locales_supported"):
        for value in server.get(key) or []:
            if not isinstance(value, str) or not LOCALE.fullmatch(value):
                fail(f"{key} contains a value that is not a BCP 47 language tag", value=value)


def disc_locales_casing(server):
    """CheckDiscEndpointLocalesCanonicalCasing: language lower case, region upper case."""
    for key in ("ui_locales_supported", "claims_locales_supported"):
        for value in server.get(key) or []:
            parts = value.split("-")
            if parts[0] != parts[0].lower() or any(len(p) == 2 and p != p.upper() for p in parts[1:]):
                fail(f"{key} contains a value not in canonical casing", value=value)


def disc_code_challenge_methods(server):
    """EnsureServerConfigurationCodeChallengeMethodsSupportedIsAnArray."""
    values = server.get("code_challenge_methods_supported")
    if values is not None and not isinstance(values, list):
        fail("code_challenge_methods_supported is not an array", actual=values)


def disc_boolean(server, key, required=None, default=None):
    """AbstractValidateJsonBoolean: key's value (or its default) is a boolean equal to required."""
    value = server.get(key, default)
    if value is None:
        fail(f"{key} is missing")
    if not isinstance(value, bool):
        fail(f"{key} is not a boolean", actual=value)
    if required is not None and value != required:
        fail(f"{key} must be {str(required).lower()}", actual=value)


def disc_end_session_endpoint(server):
    """CheckDiscEndSessionEndpoint (OIDC RP-Initiated Logout 2.1)."""
    https_url(server.get("end_session_endpoint"), "end_session_endpoint")
