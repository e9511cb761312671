"""The suite's OP test modules (net.openid.conformance.openid.*), one class each, with the
same structure as the Java classes: AbstractOIDCCServerTest's configure → authorization
request → callback → token request → userinfo, and the hooks each module overrides. Each
class names the suite's testName; `run()` returns a results.Run."""

import base64
import hashlib
import json
import secrets
import string
import time
import urllib.parse

from . import conditions as c
from .browser import Callback
from .results import FAILURE, INFO, WARNING, ConditionError, Run, Skipped, Stop

ALPHANUMERIC = string.ascii_letters + string.digits


def random_string(length):
    return "".join(secrets.choice(ALPHANUMERIC) for _ in range(length))


def ok(predicate, message, **details):
    """A condition that holds when `predicate` is true."""
    if not predicate:
        c.fail(message, **details)


class AbstractTestModule:
    name = ""

    def __init__(self, context, plan, variant):
        self.ctx = context
        self.plan = plan
        self.variant = variant
        self.run_record = Run(self.name, plan, variant)
        self.http = context.http()
        self.env = {}

    # the suite's callAndContinueOnFailure / callAndStopOnFailure
    def check(self, name, severity, condition, *args, **kwargs):
        if severity == INFO:
            try:
                return condition(*args, **kwargs)
            except ConditionError:
                return None
        return self.run_record.check(name, severity, condition, *args, **kwargs)

    def require(self, name, condition, *args, **kwargs):
        return self.run_record.require(name, condition, *args, **kwargs)

    def skip(self, reason):
        raise Skipped(reason)

    def run(self):
        try:
            self.configure()
            self.start()
        except Stop:
            pass
        except Skipped as skipped:
            self.run_record.skipped = skipped.reason
        except Exception as error:  # noqa: BLE001 - a crash of the harness or the server fails the module
            self.run_record.error = f"{type(error).__name__}: {error}"
        return self.run_record

    def get_dynamic_server_configuration(self):
        """GetDynamicServerConfiguration: fetch the discovery document."""
        def fetch():
            response = self.http.get(self.ctx.discovery_url, timeout=10)
            self.env["discovery_response"] = response
            try:
                document = response.json()
            except ValueError:
                c.fail("discovery document is not JSON", status=response.status_code)
            ok(isinstance(document, dict), "discovery document is not a JSON object")
            return document
        self.server = self.require("GetDynamicServerConfiguration", fetch)

    def fetch_server_keys(self):
        def fetch():
            response = self.http.get(self.server["jwks_uri"], timeout=10)
            ok(response.status_code == 200, "jwks_uri did not answer 200", status=response.status_code)
            return response.json()
        self.jwks = self.require("FetchServerKeys", fetch)

    def validate_jwks(self):
        """ValidateJwksSequence."""
        self.check("EnsureJwksHasNoPrivateOrSymmetricKeyMaterial", FAILURE, c.jwks_no_private, self.jwks)
        self.check("ValidateJwksStructure", FAILURE, c.jwks_structure, self.jwks)
        self.check("ParseUsableJwksKeys", FAILURE, c.jwks_parse_keys, self.jwks)
        self.check("WarnOnUnusableJwksKeys", WARNING, c.jwks_usable, self.jwks)


class OIDCCServerTest(AbstractTestModule):
    """AbstractOIDCCServerTest + OIDCCServerTest (oidcc-server)."""

    name = "oidcc-server"
    client_auth = "client_secret_basic"
    client_key = "client"

    def __init__(self, context, plan, variant):
        super().__init__(context, plan, variant)
        self.form_post = variant.endswith("form_post")
        self.browser = context.browser()
        self.second_client = False

    # --- configuration ---------------------------------------------------------------------

    @property
    def client(self):
        return self.ctx.clients["client2" if self.second_client else self.client_key]

    def configure(self):
        self.env["redirect_uri"] = self.ctx.clients[self.client_key]["redirect_uri"]
        self.get_dynamic_server_configuration()
        self.require("CheckServerConfiguration", c.check_server_configuration, self.server)
        self.require("ExtractTLSTestValuesFromServerConfiguration", c.https_url, self.server.get("issuer"), "issuer")
        self.fetch_server_keys()
        self.check("CheckServerKeysIsValid", WARNING, c.jwks_parse_keys, self.jwks)
        self.validate_jwks()
        self.check("CheckForKeyIdInServerJWKs", FAILURE, c.jwks_have_kids, self.jwks)
        self.check("CheckDistinctKeyIdValueInServerJWKs", FAILURE, c.jwks_distinct_kids, self.jwks)
        self.skip_test_if_signing_algorithm_not_supported()
        self.configure_client()
        self.skip_test_if_scopes_not_supported()
        self.on_configure()

    def skip_test_if_signing_algorithm_not_supported(self):
        pass

    def skip_test_if_scopes_not_supported(self):
        pass

    def on_configure(self):
        pass

    def configure_client(self):
        self.complete_client_configuration()

    def complete_client_configuration(self):
        self.env["scope"] = "openid"  # SetScopeInClientConfigurationToOpenId
        methods = self.server.get("token_endpoint_auth_methods_supported", ["client_secret_basic"])
        name = "EnsureServerConfigurationSupports" + ("ClientSecretBasic" if self.client_auth == "client_secret_basic"
                                                      else "ClientSecretPost")
        self.check(name, FAILURE, lambda: ok(self.client_auth in methods,
                                             f"server does not support {self.client_auth}", supported=methods))

    # --- authorization request -------------------------------------------------------------

    def start(self):
        self.perform_authorization_flow()

    def current_client(self):
        return "Second client: " if self.second_client else ""

    def perform_authorization_flow(self):
        request = self.create_authorization_request()
        self.env["authorization_endpoint_request"] = request
        url = self.create_authorization_redirect(request)
        self.perform_redirect(url)

    def create_authorization_request(self):
        return self.authorization_request_steps()

    def authorization_request_steps(self, nonce=True, state_length=None, nonce_length=None):
        """CreateAuthorizationRequestSteps."""
        request = {"client_id": self.client["client_id"], "redirect_uri": self.env["redirect_uri"],
                   "scope": self.env["scope"]}
        self.env["state"] = random_string(state_length or self.env.get("requested_state_length", 10))
        request["state"] = self.env["state"]
        self.env["nonce"] = random_string(nonce_length or 10) if nonce else None
        if nonce:
            request["nonce"] = self.env["nonce"]
        request["response_type"] = "code"
        if self.form_post:
            request["response_mode"] = "form_post"
        return request

    def create_authorization_redirect(self, request):
        """BuildPlainRedirectToAuthorizationEndpoint."""
        return self.server["authorization_endpoint"] + "?" + urllib.parse.urlencode(request)

    def perform_redirect(self, url, method="GET"):
        if method == "POST":
            base, _, query = url.partition("?")
            outcome = self.browser.navigate(base, "POST", dict(urllib.parse.parse_qsl(query)))
        else:
            outcome = self.browser.navigate(url)
        self.handle_outcome(outcome)

    def handle_outcome(self, outcome):
        if isinstance(outcome, Callback):
            self.check_callback_path(outcome.request)
            self.process_callback(outcome.request)
        else:
            self.on_page(outcome)

    def check_callback_path(self, request):
        if not request["path"].endswith("/callback"):
            self.run_record.fail(f"The authorization server sent the user to an unexpected URL {request['path']}")

    def on_page(self, page):
        """The browser stopped on a page of the server where the module expected to return to
        the client: the flow cannot complete."""
        self.run_record.fail(f"The authorization server did not redirect back to the client: it showed a page "
                             f"(HTTP {page.status}) at {page.url}: {text_of(page.text)[:200]}")

    # --- callback ---------------------------------------------------------------------------

    def process_callback(self, request):
        if self.form_post:
            params = request["form"]
            self.check("CheckCallbackHttpMethodIsPost", FAILURE,
                       lambda: ok(request["method"] == "POST", "callback was not a POST", method=request["method"]))
            self.check("CheckCallbackContentTypeIsFormUrlEncoded", FAILURE,
                       lambda: ok(request["headers"].get("content-type", "").split(";")[0].strip()
                                  == "application/x-www-form-urlencoded", "callback content type is not form encoded",
                                  content_type=request["headers"].get("content-type")))
            self.check("RejectAuthCodeInUrlQuery", FAILURE,
                       lambda: ok("code" not in request["query"], "authorization code in the url query"))
            self.check("RejectErrorInUrlQuery", FAILURE,
                       lambda: ok("error" not in request["query"], "error in the url query"))
        else:
            params = request["query"]
        self.env["callback_query_params"] = request["query"]
        self.env["authorization_endpoint_response"] = params
        self.on_authorization_callback_response(params)

    def check_matching_callback_parameters(self):
        expected = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.env["redirect_uri"]).query))
        actual = self.env["callback_query_params"]
        ok(all(actual.get(k) == v for k, v in expected.items()),
           "The redirect uri's query parameters were not preserved in the callback", expected=expected)

    def validate_iss(self, params):
        if "iss" in params and params["iss"] != self.server["issuer"]:
            c.fail("'iss' parameter in authorization response does not match server's issuer value.",
                   expected=self.server["issuer"], actual=params["iss"])

    def check_state(self, params):
        """CheckStateInAuthorizationResponse."""
        if params.get("state") != self.env["state"]:
            c.fail("State in authorization response does not match the one sent", expected=self.env["state"],
                   actual=params.get("state"))

    def on_authorization_callback_response(self, params):
        self.check("CheckMatchingCallbackParameters", FAILURE, self.check_matching_callback_parameters)
        self.check("ValidateIssIfPresentInAuthorizationResponse", FAILURE, self.validate_iss, params)
        self.require("CheckIfAuthorizationEndpointError",
                     lambda: ok("error" not in params, "Authorization endpoint returned an error", error=params.get("error"),
                                error_description=params.get("error_description")))
        self.check("CheckStateInAuthorizationResponse", FAILURE, self.check_state, params)
        self.env["code"] = self.require("ExtractAuthorizationCodeFromAuthorizationResponse",
                                        lambda: params.get("code") or c.fail("Couldn't find authorization code"))
        self.handle_successful_authorization_endpoint_response()

    def handle_successful_authorization_endpoint_response(self):
        self.perform_authorization_code_validation()
        self.perform_post_authorization_flow()

    def perform_authorization_code_validation(self):
        pass

    def perform_generic_authorization_endpoint_error_response_validation(self, params):
        self.check("CheckStateInAuthorizationResponse", FAILURE, self.check_state, params)
        self.check("ValidateIssIfPresentInAuthorizationResponse", FAILURE, self.validate_iss, params)
        self.check("EnsureErrorFromAuthorizationEndpointResponse", FAILURE,
                   lambda: ok("error" in params, "Authorization endpoint did not return an error", params=params))
        self.check("RejectAuthCodeInAuthorizationEndpointResponse", FAILURE,
                   lambda: ok("code" not in params, "Authorization code present in the error response"))
        self.check("CheckForUnexpectedParametersInErrorResponseFromAuthorizationEndpoint", WARNING,
                   c.check_error_params, params)
        self.check("CheckErrorDescriptionFromAuthorizationEndpointResponseErrorContainsCRLFTAB", WARNING,
                   c.error_description_no_crlftab, params)
        self.check("ValidateErrorDescriptionFromAuthorizationEndpointResponseError", FAILURE,
                   c.error_description_charset, params)
        self.check("ValidateErrorUriFromAuthorizationEndpointResponseError", FAILURE, c.error_uri_valid, params)

    # --- token endpoint ---------------------------------------------------------------------

    def perform_post_authorization_flow(self):
        self.create_authorization_code_request()
        self.request_authorization_code()
        self.request_protected_resource()
        self.on_post_authorization_flow_complete()

    def add_client_authentication(self, form, headers, client=None):
        client = client or self.client
        if self.client_auth == "client_secret_basic":
            # RFC 6749 2.3.1: both parts form-urlencoded before Base64
            pair = f"{urllib.parse.quote(client['client_id'], safe='')}:{urllib.parse.quote(client['client_secret'], safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form["client_id"] = client["client_id"]
            form["client_secret"] = client["client_secret"]

    def create_authorization_code_request(self):
        form = {"grant_type": "authorization_code", "code": self.env["code"], "redirect_uri": self.env["redirect_uri"]}
        headers = {}
        self.add_client_authentication(form, headers)
        self.env["token_endpoint_request"] = (form, headers)

    def call_token_endpoint(self, form_headers=None):
        form, headers = form_headers or self.env["token_endpoint_request"]
        response = self.http.post(self.server["token_endpoint"], data=form, headers=headers, timeout=15)
        self.env["token_endpoint_response_full"] = response
        try:
            body = response.json()
        except ValueError:
            body = None
        self.env["token_endpoint_response"] = body
        return response, body

    def request_authorization_code(self):
        response, body = self.require("CallTokenEndpointAndReturnFullResponse", self.call_token_endpoint)
        self.require("CheckTokenEndpointHttpStatus200",
                     lambda: ok(response.status_code == 200, "Token endpoint did not answer 200",
                                status=response.status_code, body=response.text[:300]))
        self.require("CheckIfTokenEndpointResponseError",
                     lambda: ok(isinstance(body, dict) and "error" not in body, "Token endpoint returned an error",
                                body=body))
        self.require("CheckForAccessTokenValue",
                     lambda: ok(isinstance(body.get("access_token"), str) and body["access_token"],
                                "Couldn't find access_token"))
        self.env["access_token"] = body["access_token"]
        if "expires_in" in body:
            self.check("ValidateExpiresIn", FAILURE,
                       lambda: ok(isinstance(body["expires_in"], int) and not isinstance(body["expires_in"], bool)
                                  and body["expires_in"] > 0, "expires_in is not a positive integer",
                                  expires_in=body["expires_in"]))
        if body.get("refresh_token"):
            self.env["refresh_token"] = body["refresh_token"]
        self.env["id_token"] = self.require("ExtractIdTokenFromTokenResponse",
                                            lambda: c.parse_jwt(body.get("id_token")))
        self.additional_token_endpoint_response_validation()

    def additional_token_endpoint_response_validation(self):
        self.perform_id_token_validation()

    def perform_id_token_validation(self):
        """PerformStandardIdTokenChecks."""
        token = self.env["id_token"]
        self.check("ValidateIdToken", FAILURE, c.validate_id_token, token, self.client["client_id"],
                   self.server["issuer"])
        self.check("ValidateIdTokenStandardClaims", FAILURE, c.validate_standard_claims,
                   c.id_token_identity_claims(token["claims"]), "id_token")
        self.check("ValidateIdTokenNonce", FAILURE, c.validate_nonce, token, self.env.get("nonce"))
        self.check("ValidateIdTokenACRClaimAgainstRequest", FAILURE, c.validate_acr_against_request, token,
                   self.env["authorization_endpoint_request"])
        self.check("ValidateIdTokenSignature", FAILURE, c.verify_signature, token, self.jwks)
        self.check("CheckForSubjectInIdToken", FAILURE, c.check_subject, token["claims"])
        self.check("EnsureIdTokenUpdatedAtValid", FAILURE, c.updated_at_valid, token["claims"], "id_token")

    # --- userinfo ---------------------------------------------------------------------------

    def call_userinfo(self, method="GET", in_body=False):
        url = self.server.get("userinfo_endpoint")
        ok(url, "Couldn't find userinfo_endpoint")
        if in_body:
            response = self.http.post(url, data={"access_token": self.env["access_token"]}, timeout=10)
        elif method == "POST":
            response = self.http.post(url, headers={"Authorization": "Bearer " + self.env["access_token"]}, timeout=10)
        else:
            response = self.http.get(url, headers={"Authorization": "Bearer " + self.env["access_token"]}, timeout=10)
        return response

    def request_protected_resource(self):
        response = self.require("CallProtectedResource", self.call_userinfo)
        self.env["resource_endpoint_response_full"] = response
        self.check("EnsureHttpStatusCodeIs200", FAILURE,
                   lambda: ok(response.status_code == 200, "userinfo endpoint did not answer 200",
                              status=response.status_code))

    def on_post_authorization_flow_complete(self):
        pass


class OIDCCServerHappyChecks(OIDCCServerTest):
    """The extra checks of OIDCCServerTest itself."""

    def additional_token_endpoint_response_validation(self):
        super().additional_token_endpoint_response_validation()
        body = self.env["token_endpoint_response"]
        self.check("ExtractExpiresInFromTokenEndpointResponse", WARNING,
                   lambda: ok("expires_in" in body, "expires_in is missing from the token response"))
        token = self.env["id_token"]
        if "at_hash" in token["claims"]:
            self.check("ValidateAtHash", FAILURE, c.validate_hash, token, "at_hash", self.env["access_token"])
        if "c_hash" in token["claims"]:
            self.check("ValidateCHash", FAILURE, c.validate_hash, token, "c_hash", self.env["code"])

    def perform_id_token_validation(self):
        super().perform_id_token_validation()
        self.check("EnsureIdTokenDoesNotContainName", WARNING, c.ensure_no_name, self.env["id_token"]["claims"],
                   "id_token")

    def perform_authorization_code_validation(self):
        self.check("EnsureMinimumAuthorizationCodeLength", FAILURE, c.ensure_min_length, self.env["code"],
                   "Authorization code")
        self.check("EnsureMinimumAuthorizationCodeEntropy", FAILURE, c.ensure_min_entropy, self.env["code"],
                   "authorization code")

    def on_post_authorization_flow_complete(self):
        if not self.second_client:
            self.check("EnsureIdTokenDoesNotContainNonRequestedClaims", WARNING, c.ensure_no_non_requested_claims,
                       self.env["id_token"]["claims"], self.env["authorization_endpoint_request"]["scope"])


class OIDCCServerTestModule(OIDCCServerHappyChecks):
    name = "oidcc-server"


class OIDCCServerTestClientSecretPost(OIDCCServerHappyChecks):
    name = "oidcc-server-client-secret-post"
    client_auth = "client_secret_post"
    client_key = "client_post"


def text_of(html):
    import re
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html or "")).strip()


class PlaceholderOrCallback(OIDCCServerTest):
    """AbstractOIDCCServerTestExpectingAuthorizationEndpointPlaceholderOrCallback: the server
    may show an error page (the suite asks for a screenshot; the harness checks that the page
    is an error page) or redirect back with an error."""

    placeholder = "ExpectErrorPage"

    def on_page(self, page):
        self.check(self.placeholder, FAILURE,
                   lambda: ok(page.status >= 400, "The authorization server showed a page that is not an error page",
                              status=page.status, text=text_of(page.text)[:200]))


class OIDCCResponseTypeMissing(PlaceholderOrCallback):
    name = "oidcc-response-type-missing"
    placeholder = "ExpectResponseTypeMissingErrorPage"

    def create_authorization_request(self):
        request = self.authorization_request_steps()
        del request["response_type"]  # "Miss out the response_type"
        return request

    def process_callback(self, request):
        if self.form_post:
            params = request["form"]
            self.check("CheckCallbackHttpMethodIsPost", FAILURE,
                       lambda: ok(request["method"] == "POST", "callback was not a POST"))
            self.check("CheckCallbackContentTypeIsFormUrlEncoded", FAILURE,
                       lambda: ok(request["headers"].get("content-type", "").startswith(
                           "application/x-www-form-urlencoded"), "callback content type is not form encoded"))
            self.check("RejectAuthCodeInUrlQuery", FAILURE, lambda: ok("code" not in request["query"], "code in query"))
            self.check("RejectErrorInUrlQuery", FAILURE, lambda: ok("error" not in request["query"], "error in query"))
        else:
            params = request["query"]
        self.perform_generic_authorization_endpoint_error_response_validation(params)
        self.check("CheckErrorFromAuthorizationEndpointErrorInvalidRequestOrUnsupportedResponseType", FAILURE,
                   lambda: ok(params.get("error") in ("invalid_request", "unsupported_response_type"),
                              "error is not invalid_request or unsupported_response_type", error=params.get("error")))


class NotApplicableToStaticClients(AbstractTestModule):
    """Modules the suite marks @VariantNotApplicable(ClientRegistration = static_client): the
    plan lists them, but the suite does not run them for static clients."""

    def run(self):
        self.run_record.skipped = ("not applicable to static clients (@VariantNotApplicable static_client in the "
                                   "suite); the plan does not run it for this configuration")
        return self.run_record


class OIDCCIdTokenSignature(NotApplicableToStaticClients):
    name = "oidcc-idtoken-signature"


class OIDCCIdTokenUnsigned(NotApplicableToStaticClients):
    name = "oidcc-idtoken-unsigned"


class AbstractOIDCCUserInfoTest(OIDCCServerTest):
    def on_post_authorization_flow_complete(self):
        response = self.call_userinfo_endpoint()
        self.extract_userinfo_response(response)
        self.validate_extracted_userinfo_response()

    def call_userinfo_endpoint(self):
        response = self.require("CallUserInfoEndpoint", self.call_userinfo)
        self.check("EnsureHttpStatusCodeIs200", FAILURE,
                   lambda: ok(response.status_code == 200, "userinfo endpoint did not answer 200",
                              status=response.status_code))
        return response

    def extract_userinfo_response(self, response):
        self.check("EnsureContentTypeJson", FAILURE,
                   lambda: ok(response.headers.get("Content-Type", "").split(";")[0].strip() == "application/json",
                              "userinfo response is not application/json",
                              content_type=response.headers.get("Content-Type")))
        self.env["userinfo"] = self.require(
            "ExtractUserInfoFromUserInfoEndpointResponse",
            lambda: response.json() if isinstance(safe_json(response), dict) else c.fail("userinfo is not JSON"))

    def validate_extracted_userinfo_response(self):
        userinfo = self.env["userinfo"]
        self.check("ValidateUserInfoStandardClaims", FAILURE, c.validate_standard_claims, userinfo, "userinfo")
        self.check("EnsureUserInfoContainsSub", FAILURE, c.check_subject, userinfo)
        self.check("EnsureUserInfoUpdatedAtValid", FAILURE, c.updated_at_valid, userinfo, "userinfo")
        self.check("EnsureMemberValuesInClaimNameReferenceToMemberNamesInClaimSources", FAILURE,
                   c.claim_names_reference_sources, userinfo)


def safe_json(response):
    try:
        return response.json()
    except ValueError:
        return None


class OIDCCUserInfoGet(AbstractOIDCCUserInfoTest):
    name = "oidcc-userinfo-get"


class OIDCCUserInfoPostHeader(AbstractOIDCCUserInfoTest):
    name = "oidcc-userinfo-post-header"

    def call_userinfo_endpoint(self):
        response = self.require("CallUserInfoEndpoint", self.call_userinfo, "POST")
        self.check("EnsureHttpStatusCodeIs200", FAILURE,
                   lambda: ok(response.status_code == 200, "userinfo endpoint did not answer 200",
                              status=response.status_code))
        return response


class OIDCCUserInfoPostBody(AbstractOIDCCUserInfoTest):
    name = "oidcc-userinfo-post-body"

    def on_post_authorization_flow_complete(self):
        response = self.require("CallUserInfoEndpointWithBearerTokenInBody", self.call_userinfo, "POST", True)
        if not 200 <= response.status_code < 300:
            self.check("UserInfoEndpointWithAccessTokenInBodyNotSupported", WARNING,
                       lambda: c.fail("The userinfo endpoint did not accept the access token in the request body "
                                      "(RFC 6750 2.2, optional for servers)", status=response.status_code))
        else:
            self.extract_userinfo_response(response)
            self.validate_extracted_userinfo_response()


class OIDCCEnsureRequestWithoutNonceSucceedsForCodeFlow(OIDCCServerTest):
    name = "oidcc-ensure-request-without-nonce-succeeds-for-code-flow"

    def create_authorization_request(self):
        return self.authorization_request_steps(nonce=False)  # "NOT adding nonce to request object"

    def perform_post_authorization_flow(self):
        self.on_post_authorization_flow_complete()


class AbstractOIDCCReturnedClaimsServerTest(OIDCCServerTest):
    scope = "openid"

    def skip_test_if_scopes_not_supported(self):
        self.env["scope"] = self.scope
        supported = self.server.get("scopes_supported")  # OIDCCCheckScopesSupportedContainScopeTest
        if not isinstance(supported, list) or any(s not in supported for s in self.scope.split(" ")):
            self.skip("scopes_supported from the discovery endpoint indicates the server doesn't support the "
                      "scopes required for this test; so the test has been skipped")

    def on_post_authorization_flow_complete(self):
        response = self.require("CallUserInfoEndpoint", self.call_userinfo)
        self.check("EnsureHttpStatusCodeIs200", FAILURE,
                   lambda: ok(response.status_code == 200, "userinfo endpoint did not answer 200",
                              status=response.status_code))
        self.env["userinfo"] = self.require(
            "ExtractUserInfoFromUserInfoEndpointResponse",
            lambda: safe_json(response) if isinstance(safe_json(response), dict) else c.fail("userinfo is not JSON"))
        self.validate_userinfo_response()

    def validate_userinfo_response(self):
        userinfo = self.env["userinfo"]
        self.check("ValidateUserInfoStandardClaims", FAILURE, c.validate_standard_claims, userinfo, "userinfo")
        self.check("EnsureUserInfoContainsSub", FAILURE, c.check_subject, userinfo)
        self.check("EnsureUserInfoUpdatedAtValid", FAILURE, c.updated_at_valid, userinfo, "userinfo")
        self.check("EnsureMemberValuesInClaimNameReferenceToMemberNamesInClaimSources", FAILURE,
                   c.claim_names_reference_sources, userinfo)
        self.check("VerifyUserInfoAndIdTokenInTokenEndpointSameSub", FAILURE,
                   lambda: ok(userinfo.get("sub") == self.env["id_token"]["claims"].get("sub"),
                              "sub in userinfo differs from the id_token's", userinfo=userinfo.get("sub"),
                              id_token=self.env["id_token"]["claims"].get("sub")))
        self.check("VerifyScopesReturnedInUserInfoClaims", WARNING, c.verify_scopes_in_claims, userinfo,
                   self.env["authorization_endpoint_request"]["scope"], "userinfo")


class OIDCCScopeProfile(AbstractOIDCCReturnedClaimsServerTest):
    name = "oidcc-scope-profile"
    scope = "openid profile"


class OIDCCScopeEmail(AbstractOIDCCReturnedClaimsServerTest):
    name = "oidcc-scope-email"
    scope = "openid email"

    def perform_id_token_validation(self):
        super().perform_id_token_validation()
        claims = self.env["id_token"]["claims"]
        self.check("EnsureIdTokenDoesNotContainName", WARNING, c.ensure_no_name, claims, "id_token")
        self.check("EnsureIdTokenDoesNotContainEmailForScopeEmail", WARNING, c.ensure_id_token_no_email, claims)

    def validate_userinfo_response(self):
        super().validate_userinfo_response()
        self.check("EnsureUserInfoDoesNotContainName", WARNING, c.ensure_no_name, self.env["userinfo"], "userinfo")


class OIDCCScopeAddress(AbstractOIDCCReturnedClaimsServerTest):
    name = "oidcc-scope-address"
    scope = "openid address"


class OIDCCScopePhone(AbstractOIDCCReturnedClaimsServerTest):
    name = "oidcc-scope-phone"
    scope = "openid phone"


class OIDCCScopeAll(AbstractOIDCCReturnedClaimsServerTest):
    name = "oidcc-scope-all"
    scope = "openid email phone address profile"


class OIDCCAlternateHappyFlow(OIDCCScopeEmail):
    name = "oidcc-alternate-happy-flow"

    def create_authorization_request(self):
        request = super().create_authorization_request()
        request["scope"] = " ".join(reversed(request["scope"].split(" ")))  # ReverseScopeOrder…
        return request

    def create_authorization_redirect(self, request):
        # BuildPlainRedirectToAuthorizationEndpointReorderedParams
        return self.server["authorization_endpoint"] + "?" + urllib.parse.urlencode(list(reversed(request.items())))


class WithExtraParameters(OIDCCServerTest):
    extra = {}

    def create_authorization_request(self):
        request = self.authorization_request_steps()
        request.update(self.extra_parameters())
        return request

    def extra_parameters(self):
        return dict(self.extra)


class OIDCCDisplayPage(WithExtraParameters):
    name = "oidcc-display-page"
    extra = {"display": "page"}


class OIDCCDisplayPopup(WithExtraParameters):
    name = "oidcc-display-popup"
    extra = {"display": "popup"}


class OIDCCEnsureRequestWithUnknownParameterSucceeds(WithExtraParameters):
    name = "oidcc-ensure-request-with-unknown-parameter-succeeds"
    extra = {"extra": "foobar"}


class OIDCCLoginHint(WithExtraParameters):
    name = "oidcc-login-hint"

    def extra_parameters(self):
        return {"login_hint": "buffy@" + urllib.parse.urlsplit(self.server["issuer"]).hostname}


class OIDCCUiLocales(WithExtraParameters):
    name = "oidcc-ui-locales"
    extra = {"ui_locales": "se"}


class OIDCCClaimsLocales(WithExtraParameters):
    name = "oidcc-claims-locales"
    extra = {"claims_locales": "se"}


class OIDCCEnsureRequestWithAcrValuesSucceeds(WithExtraParameters):
    name = "oidcc-ensure-request-with-acr-values-succeeds"

    def extra_parameters(self):
        supported = self.server.get("acr_values_supported")
        return {"acr_values": " ".join(supported) if supported is not None else "1 2"}

    def perform_id_token_validation(self):
        super().perform_id_token_validation()

        def acr_matches():
            acr = self.env["id_token"]["claims"].get("acr")
            requested = self.env["authorization_endpoint_request"]["acr_values"].split(" ")
            if acr is None:
                c.fail("An acr value was requested using acr_values, so the server 'SHOULD' return an acr claim, but "
                       "it did not.")
            if not isinstance(acr, str):
                c.fail("acr value in id_token must be a string")
            if acr not in requested:
                c.fail("acr value in id_token is not (one of the) requested values", requested=requested, actual=acr)
        self.check("ValidateIdTokenACRClaimAgainstAcrValuesRequest", WARNING, acr_matches)


class TwoAuthorizations(OIDCCServerTest):
    """The first/second authorization bookkeeping of OIDCCPromptLogin, OIDCCMaxAge1 and
    AbstractOIDCCSameAuthTwiceServerTest."""

    def __init__(self, *args):
        super().__init__(*args)
        self.first_time = True

    def on_post_authorization_flow_complete(self):
        if self.first_time:
            self.first_time = False
            self.env["first_id_token"] = self.env["id_token"]
            self.validate_first_id_token()
            self.perform_authorization_flow()
        else:
            self.after_second_authorization()

    def validate_first_id_token(self):
        pass

    def after_second_authorization(self):
        pass


def auth_time_same_if_present(first, second):
    """CheckIdTokenAuthTimeClaimsSameIfPresent."""
    a, b = first["claims"].get("auth_time"), second["claims"].get("auth_time")
    if a is not None and b is not None and a != b:
        c.fail("auth_time differs between the two id_tokens although the user did not sign in again",
               first=a, second=b)


def sub_consistent(first, second):
    """CheckIdTokenSubConsistentForSecondAuthorization."""
    if first["claims"].get("sub") != second["claims"].get("sub"):
        c.fail("sub differs between the two id_tokens", first=first["claims"].get("sub"),
               second=second["claims"].get("sub"))


def second_auth_time_later_if_present(first, second):
    """CheckSecondIdTokenAuthTimeIsLaterIfPresent."""
    a, b = first["claims"].get("auth_time"), second["claims"].get("auth_time")
    if a is None or b is None:
        return
    if a == b:
        c.fail("the server was required to reauthenticate the user, the id_token from the second authorization "
               "incorrectly has the same auth_time as the id_token from the first authorization")
    if a > b:
        c.fail("The id_token from the second authorization incorrectly has an earlier auth_time than the id_token "
               "from the first authorization")


def auth_time_present(token):
    """CheckIdTokenAuthTimeClaimPresentDueToMaxAge (OIDCC 3.1.2.1)."""
    if "auth_time" not in token["claims"]:
        c.fail("auth_time claim is missing from the id_token, but it is required for an authentication where "
               "the max_age parameter was used")


def auth_time_recent(token):
    """CheckIdTokenAuthTimeIsRecentIfPresent."""
    auth_time = token["claims"].get("auth_time")
    if auth_time is not None and time.time() - c.SKEW - 1 > auth_time:
        c.fail("id_token auth_time is older than 1 second (allowing 5 minutes skews)", auth_time=auth_time)


class AbstractOIDCCSameAuthTwiceServerTest(TwoAuthorizations):
    def create_authorization_request(self):
        if self.first_time:
            return self.create_first_authorization_request()
        return self.create_second_authorization_request()

    def create_first_authorization_request(self):
        return self.authorization_request_steps()

    def create_second_authorization_request(self):
        raise NotImplementedError

    def on_page(self, page):
        if not self.first_time:
            self.run_record.fail("The authorization server asked the user to interact on the second authorization "
                                 f"(HTTP {page.status} at {page.url})")
        super().on_page(page)

    def after_second_authorization(self):
        self.validate_first_and_second_id_tokens()

    def validate_first_and_second_id_tokens(self):
        first, second = self.env["first_id_token"], self.env["id_token"]
        self.check("CheckIdTokenAuthTimeClaimsSameIfPresent", FAILURE, auth_time_same_if_present, first, second)
        self.check("CheckIdTokenSubConsistentForSecondAuthorization", FAILURE, sub_consistent, first, second)


class PromptNoneSecond(AbstractOIDCCSameAuthTwiceServerTest):
    """The second authorization has prompt=none: the user agent must not be shown any page;
    the harness's browser would sign in or consent if asked, so it counts that it was not."""

    def perform_redirect(self, url, method="GET"):
        if self.first_time:
            return super().perform_redirect(url, method)
        sign_ins, consents = self.browser.sign_ins, self.browser.consents
        outcome = self.browser.navigate(url)
        if self.browser.sign_ins != sign_ins or self.browser.consents != consents:
            self.run_record.fail("The authorization server asked the user to sign in or consent although the request "
                                 "had prompt=none")
        self.handle_outcome(outcome)


class OIDCCPromptNoneLoggedIn(PromptNoneSecond):
    name = "oidcc-prompt-none-logged-in"

    def create_second_authorization_request(self):
        request = self.authorization_request_steps()
        request["prompt"] = "none"
        return request


class OIDCCIdTokenHint(PromptNoneSecond):
    name = "oidcc-id-token-hint"

    def create_second_authorization_request(self):
        request = self.authorization_request_steps()
        request["prompt"] = "none"
        request["id_token_hint"] = self.env["first_id_token"]["value"]
        return request


class OIDCCMaxAge10000(AbstractOIDCCSameAuthTwiceServerTest):
    name = "oidcc-max-age-10000"

    def create_first_authorization_request(self):
        request = self.authorization_request_steps()
        request["max_age"] = "15000"
        return request

    def create_second_authorization_request(self):
        request = self.authorization_request_steps()
        request["max_age"] = "10000"
        return request

    def perform_redirect(self, url, method="GET"):
        if self.first_time:
            return super().perform_redirect(url, method)
        sign_ins = self.browser.sign_ins
        outcome = self.browser.navigate(url)
        if self.browser.sign_ins != sign_ins:
            self.run_record.fail("The authorization server asked the user to sign in again although max_age=10000 "
                                 "had not passed")
        self.handle_outcome(outcome)

    def validate_first_id_token(self):
        self.check("CheckIdTokenAuthTimeClaimPresentDueToMaxAge", FAILURE, auth_time_present, self.env["id_token"])

    def validate_first_and_second_id_tokens(self):
        self.check("CheckIdTokenAuthTimeClaimPresentDueToMaxAge", FAILURE, auth_time_present, self.env["id_token"])
        super().validate_first_and_second_id_tokens()


class SecondLoginPage(TwoAuthorizations):
    """OIDCCPromptLogin / OIDCCMaxAge1: the second authorization must show the sign-in page
    (the suite's ExpectSecondLoginPage placeholder: the harness checks that the server asked
    the user to sign in again, and signs in)."""

    def perform_redirect(self, url, method="GET"):
        if self.first_time:
            return super().perform_redirect(url, method)
        sign_ins = self.browser.sign_ins
        outcome = self.browser.navigate(url)
        self.check("ExpectSecondLoginPage", FAILURE,
                   lambda: ok(self.browser.sign_ins > sign_ins, "The authorization server did not ask the user to "
                              "sign in again on the second authorization"))
        self.handle_outcome(outcome)


class OIDCCPromptLogin(SecondLoginPage):
    name = "oidcc-prompt-login"

    def create_authorization_request(self):
        request = self.authorization_request_steps()
        if not self.first_time:
            time.sleep(1)  # WaitForOneSecond
            request["prompt"] = "login"
        return request

    def after_second_authorization(self):
        self.check("CheckSecondIdTokenAuthTimeIsLaterIfPresent", FAILURE, second_auth_time_later_if_present,
                   self.env["first_id_token"], self.env["id_token"])


class OIDCCMaxAge1(SecondLoginPage):
    name = "oidcc-max-age-1"

    def create_authorization_request(self):
        request = self.authorization_request_steps()
        if not self.first_time:
            time.sleep(2)  # WaitFor2Seconds
            request["max_age"] = "1"
        return request

    def perform_id_token_validation(self):
        super().perform_id_token_validation()
        if not self.first_time:
            token = self.env["id_token"]
            self.check("CheckIdTokenAuthTimeClaimPresentDueToMaxAge", FAILURE, auth_time_present, token)
            self.check("CheckSecondIdTokenAuthTimeIsLaterIfPresent", FAILURE, second_auth_time_later_if_present,
                       self.env["first_id_token"], token)
            self.check("CheckIdTokenAuthTimeIsRecentIfPresent", FAILURE, auth_time_recent, token)


class OIDCCPromptNoneNotLoggedIn(OIDCCServerTest):
    name = "oidcc-prompt-none-not-logged-in"

    def create_authorization_request(self):
        self.env["requested_state_length"] = 128
        request = self.authorization_request_steps()
        request["prompt"] = "none"
        return request

    def on_authorization_callback_response(self, params):
        self.perform_generic_authorization_endpoint_error_response_validation(params)
        self.check("CheckErrorFromAuthorizationEndpointIsOneThatRequiredAUserInterface", FAILURE,
                   lambda: ok(params.get("error") in ("interaction_required", "login_required",
                                                      "account_selection_required", "consent_required"),
                              "'error' field has an unexpected value", actual=params.get("error")))


class AbstractOIDCCAuthCodeReuse(OIDCCServerTest):
    def on_post_authorization_flow_complete(self):
        self.test_reuse_of_authorization_code()

    def test_reuse_of_authorization_code(self):
        response, body = self.require("CallTokenEndpointAndReturnFullResponse", self.call_token_endpoint)
        self.check_response(response, body)

    def check_response(self, response, body):
        body = body if isinstance(body, dict) else {}
        self.check("CheckTokenEndpointHttpStatus400", FAILURE,
                   lambda: ok(response.status_code == 400, "Token endpoint did not answer 400",
                              status=response.status_code))
        self.check("CheckTokenEndpointReturnedJsonContentType", FAILURE,
                   lambda: ok(response.headers.get("Content-Type", "").split(";")[0].strip() == "application/json",
                              "Token endpoint error is not JSON", content_type=response.headers.get("Content-Type")))
        self.check("CheckErrorFromTokenEndpointResponseErrorInvalidGrant", FAILURE,
                   lambda: ok(body.get("error") == "invalid_grant", "error is not invalid_grant",
                              error=body.get("error")))
        self.check("ValidateErrorFromTokenEndpointResponseError", FAILURE, c.error_code_valid, body)
        self.check("CheckErrorDescriptionFromTokenEndpointResponseErrorContainsCRLFTAB", WARNING,
                   c.error_description_no_crlftab, body)
        self.check("ValidateErrorDescriptionFromTokenEndpointResponseError", FAILURE, c.error_description_charset,
                   body)
        self.check("ValidateErrorUriFromTokenEndpointResponseError", FAILURE, c.error_uri_valid, body)


class OIDCCAuthCodeReuse(AbstractOIDCCAuthCodeReuse):
    name = "oidcc-codereuse"

    def check_response(self, response, body):
        if response.status_code == 200:
            self.check("ServerAllowedReusingAuthorizationCode", WARNING,
                       lambda: c.fail("The server allowed the authorization code to be used twice"))
        else:
            super().check_response(response, body)


class OIDCCAuthCodeReuseAfter30Seconds(AbstractOIDCCAuthCodeReuse):
    name = "oidcc-codereuse-30seconds"
    wait_seconds = 30

    def test_reuse_of_authorization_code(self):
        time.sleep(self.wait_seconds)  # WaitFor30Seconds
        super().test_reuse_of_authorization_code()

    def check_response(self, response, body):
        super().check_response(response, body)
        userinfo = self.require("CallProtectedResource", self.call_userinfo)
        self.check("EnsureHttpStatusCodeIs4xx", WARNING,
                   lambda: ok(400 <= userinfo.status_code < 500, "The access token still works after the "
                              "authorization code was reused (RFC 6749 4.1.2: it should be revoked)",
                              status=userinfo.status_code))


class OIDCCEnsureRegisteredRedirectUri(PlaceholderOrCallback):
    name = "oidcc-ensure-registered-redirect-uri"
    placeholder = "ExpectRedirectUriErrorPage"

    def on_configure(self):
        # CreateBadRedirectUriByAppending
        self.env["bad_redirect_path"] = random_string(10)
        self.env["redirect_uri"] = self.ctx.receiver.base + "/callback/" + self.env["bad_redirect_path"]

    def check_callback_path(self, request):
        if request["path"].endswith(self.env["bad_redirect_path"]):
            self.run_record.fail("The authorization server redirected the user to the requested but "
                                 "randomised/unregistered redirect uri. This must not happen as the provided redirect "
                                 "uri could not have been registered.")

    def process_callback(self, request):
        self.run_record.fail("The authorization server called the registered redirect uri. This should not have "
                             "happened as the client provided a bad redirect_uri in the request.")


class OIDCCEnsurePostRequestSucceeds(OIDCCServerTest):
    name = "oidcc-ensure-post-request-succeeds"

    def perform_redirect(self, url, method="GET"):
        super().perform_redirect(url, "POST")


class RequestObjectNotSupported(OIDCCServerTest):
    """AbstractOIDCCRequestObjectServerTest: skipped when 'none' is not in
    request_object_signing_alg_values_supported (skipTestIfNoneUnsupported), otherwise an
    unsigned request object (by value or by reference) must be processed or refused with
    request_not_supported / request_uri_not_supported."""

    def on_configure(self):
        values = self.server.get("request_object_signing_alg_values_supported")
        if isinstance(values, list) and "none" not in values:
            self.skip("'none' is not listed in request_object_signing_alg_values_supported - assuming it is not "
                      "supported.")

    def unsigned_request_object(self, request):
        header = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()
        # ConvertAuthorizationEndpointRequestToRequestObject: the request's parameters as claims
        payload = base64.urlsafe_b64encode(json.dumps(request).encode()).rstrip(b"=").decode()
        return f"{header}.{payload}."

    def create_authorization_redirect(self, request):
        # ConvertAuthorizationEndpointRequestToRequestObject + BuildRequestObjectByValueRedirect…
        query = {"client_id": request["client_id"], "response_type": request["response_type"],
                 "scope": request["scope"], "redirect_uri": request["redirect_uri"],
                 "request": self.unsigned_request_object(request)}
        return self.server["authorization_endpoint"] + "?" + urllib.parse.urlencode(query)

    not_supported_error = "request_not_supported"
    not_supported_reason = ("The 'request_not_supported' error from the authorization endpoint indicates that it does "
                            "not support request objects (which is permitted behaviour), so request objects cannot be "
                            "tested.")

    def on_authorization_callback_response(self, params):
        if params.get("error") == self.not_supported_error:
            self.skip(self.not_supported_reason)
        self.check("CheckDiscEndpointRequestParameterSupported", WARNING,
                   lambda: ok(self.server.get("request_parameter_supported") is True,
                              "request_parameter_supported is not true although the server processed a request object"))
        super().on_authorization_callback_response(params)


class OIDCCUnsignedRequestObjectSupportedCorrectlyOrRejectedAsUnsupported(RequestObjectNotSupported):
    name = "oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported"


class OIDCCRequestUriUnsignedSupportedCorrectlyOrRejectedAsUnsupported(NotApplicableToStaticClients):
    """@VariantNotApplicable(ClientRegistration = static_client) in the suite."""
    name = "oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported"


class OIDCCEnsureRequestObjectWithRedirectUri(RequestObjectNotSupported, PlaceholderOrCallback):
    name = "oidcc-ensure-request-object-with-redirect-uri"
    placeholder = "ExpectRedirectUriErrorPage"

    def create_authorization_redirect(self, request):
        query = {"client_id": request["client_id"], "response_type": request["response_type"],
                 "scope": request["scope"], "redirect_uri": self.ctx.receiver.base + "/invalid_redirect_uri",
                 "request": self.unsigned_request_object(request)}
        return self.server["authorization_endpoint"] + "?" + urllib.parse.urlencode(query)

    def on_authorization_callback_response(self, params):
        if params.get("error") == "request_not_supported":
            self.run_record.fail("The server returned request_not_supported to the registered redirect uri although "
                                 "the redirect_uri outside the request object was invalid "
                                 "(EnsureOPDoesNotUseDefaultRedirectUriInCaseOfInvalidRedirectUri)")
        super().on_authorization_callback_response(params)


class OIDCCClaimsEssential(AbstractOIDCCReturnedClaimsServerTest):
    name = "oidcc-claims-essential"

    def skip_test_if_scopes_not_supported(self):
        pass

    def create_authorization_request(self):
        request = self.authorization_request_steps()
        request["claims"] = json.dumps({"userinfo": {"name": {"essential": True}}})
        return request

    def validate_userinfo_response(self):
        super().validate_userinfo_response()
        self.check("EnsureUserInfoContainsName", WARNING,
                   lambda: ok(c._is_string(self.env["userinfo"].get("name")),
                              "The name claim was requested as essential in the userinfo but was not returned"))
        self.check("EnsureIdTokenDoesNotContainName", WARNING, c.ensure_no_name, self.env["id_token"]["claims"],
                   "id_token")


class OIDCCEnsureRequestWithValidPkceSucceeds(OIDCCServerTest):
    name = "oidcc-ensure-request-with-valid-pkce-succeeds"

    def create_authorization_request(self):
        request = self.authorization_request_steps()
        # SetupPkceAndAddToAuthorizationRequest
        self.env["code_verifier"] = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(self.env["code_verifier"].encode()).digest())
        request["code_challenge"] = challenge.rstrip(b"=").decode()
        request["code_challenge_method"] = "S256"
        return request

    def create_authorization_code_request(self):
        super().create_authorization_code_request()
        self.env["token_endpoint_request"][0]["code_verifier"] = self.env["code_verifier"]  # AddCodeVerifier…


def compare_id_token_claims(first, second):
    """CompareIdTokenClaims (OIDCC 12.2): the refreshed id_token keeps iss, sub, aud (and
    auth_time and azp when present), with a new iat."""
    a, b = first["claims"], second["claims"]
    for claim in ("iss", "sub", "aud"):
        if a.get(claim) != b.get(claim):
            c.fail(f"'{claim}' differs between the original and the refreshed id_token", original=a.get(claim),
                   refreshed=b.get(claim))
    for claim in ("auth_time", "azp"):
        if claim in a and a.get(claim) != b.get(claim):
            c.fail(f"'{claim}' differs between the original and the refreshed id_token", original=a.get(claim),
                   refreshed=b.get(claim))
    if not isinstance(b.get("iat"), (int, float)):
        c.fail("the refreshed id_token has no iat")


class OIDCCRefreshToken(OIDCCServerTest):
    """OIDCCRefreshToken (AbstractOIDCCMultipleClient): client and client2 each get a refresh
    token and refresh it; client2's refresh token must not work for client."""

    name = "oidcc-refresh-token"

    def complete_client_configuration(self):
        super().complete_client_configuration()
        supported = self.server.get("scopes_supported") or []
        self.env["scope"] = "openid offline_access" if "offline_access" in supported else "openid"

    def create_authorization_request(self):
        request = self.authorization_request_steps(nonce_length=43 if self.second_client else None)
        if "offline_access" in request["scope"].split(" "):
            request["prompt"] = "consent"  # AddPromptConsentToAuthorizationEndpointRequestIfScopeContainsOfflineAccess
        return request

    def perform_post_authorization_flow(self):
        self.create_authorization_code_request()
        self.env.pop("refresh_token", None)
        self.request_authorization_code()
        self.env["first_access_token"] = self.env["access_token"]
        self.env["first_id_token"] = self.env["id_token"]
        self.send_refresh_token_request_and_check_id_token_claims()
        self.request_protected_resource()
        self.on_post_authorization_flow_complete()

    def refresh_request(self, client):
        form = {"grant_type": "refresh_token", "refresh_token": self.env["refresh_token"]}
        if client is self.ctx.clients["client"]:
            form["scope"] = self.env["scope"]  # AddScopeToTokenEndpointRequest (first client only)
        headers = {}
        self.add_client_authentication(form, headers, client)
        return form, headers

    def send_refresh_token_request_and_check_id_token_claims(self):
        if not self.env.get("refresh_token"):
            self.check("EnsureServerConfigurationDoesNotSupportRefreshToken", WARNING,
                       lambda: ok("refresh_token" not in (self.server.get("grant_types_supported") or []),
                                  "refresh_token is in grant_types_supported but no refresh token was issued"))
            self.skip("Refresh tokens cannot be tested. No refresh token was issued.")
        self.check("EnsureServerConfigurationSupportsRefreshToken", WARNING,
                   lambda: ok("refresh_token" in (self.server.get("grant_types_supported") or []),
                              "grant_types_supported does not contain refresh_token"))
        self.check("EnsureRefreshTokenContainsAllowedCharactersOnly", FAILURE,
                   lambda: ok(all(0x20 <= ord(ch) <= 0x7E for ch in self.env["refresh_token"]),
                              "refresh token contains characters outside VSCHAR"))
        time.sleep(1)  # WaitForOneSecond
        response, body = self.require("CallTokenEndpointAndReturnFullResponse", self.call_token_endpoint,
                                      self.refresh_request(self.client))
        body = body if isinstance(body, dict) else {}
        self.check("CheckTokenEndpointHttpStatus200", FAILURE,
                   lambda: ok(response.status_code == 200, "refresh did not answer 200", status=response.status_code,
                              body=body))
        self.check("CheckTokenEndpointReturnedJsonContentType", FAILURE,
                   lambda: ok(response.headers.get("Content-Type", "").split(";")[0].strip() == "application/json",
                              "refresh response is not JSON"))
        self.check("CheckTokenEndpointCacheHeaders", FAILURE,
                   lambda: ok("no-store" in [p.strip() for p in response.headers.get("Cache-Control", "").split(",")],
                              "'cache-control' header in token endpoint response does not contain expected value.",
                              actual=response.headers.get("Cache-Control")))
        self.require("CheckIfTokenEndpointResponseError", lambda: ok("error" not in body, "refresh failed", body=body))
        self.env["access_token"] = self.require("ExtractAccessTokenFromTokenResponse",
                                                lambda: body.get("access_token") or c.fail("no access_token"))
        self.check("CheckTokenTypeIsBearer", FAILURE,
                   lambda: ok(str(body.get("token_type", "")).lower() == "bearer", "token_type is not Bearer",
                              token_type=body.get("token_type")))
        self.check("EnsureMinimumAccessTokenEntropy", FAILURE, c.ensure_min_entropy, body["access_token"],
                   "access token")
        self.check("EnsureAccessTokenContainsAllowedCharactersOnly", FAILURE,
                   lambda: ok(all(0x20 <= ord(ch) <= 0x7E for ch in body["access_token"]),
                              "access token contains characters outside VSCHAR"))
        self.check("ExtractExpiresInFromTokenEndpointResponse", WARNING,
                   lambda: ok("expires_in" in body, "expires_in is missing from the refresh response"))
        if "expires_in" in body:
            self.check("ValidateExpiresIn", FAILURE,
                       lambda: ok(isinstance(body["expires_in"], int) and body["expires_in"] > 0,
                                  "expires_in is not a positive integer"))
        if body.get("refresh_token"):
            self.env["refresh_token"] = body["refresh_token"]
            self.check("EnsureMinimumRefreshTokenLength", FAILURE, c.ensure_min_length, body["refresh_token"],
                       "refresh token")
            self.check("EnsureMinimumRefreshTokenEntropy", FAILURE, c.ensure_min_entropy, body["refresh_token"],
                       "refresh token")
        if body.get("id_token"):
            try:
                second = c.parse_jwt(body["id_token"])
            except ConditionError:
                second = None
            if second is not None:
                self.env["id_token"] = second
                self.check("CompareIdTokenClaims", FAILURE, compare_id_token_claims, self.env["first_id_token"],
                           second)

    def on_post_authorization_flow_complete(self):
        if not self.second_client:
            self.env["client1_done"] = True
            self.second_client = True  # switchToSecondClient
            self.perform_authorization_flow()
        else:
            self.perform_second_client_tests()

    def perform_second_client_tests(self):
        """Client2's refresh token presented by client: RefreshTokenRequestExpectingErrorSteps."""
        self.second_client = False
        response, body = self.require("CallTokenEndpointAndReturnFullResponse", self.call_token_endpoint,
                                      self.refresh_request(self.ctx.clients["client"]))
        body = body if isinstance(body, dict) else {}
        self.require("ValidateErrorFromTokenEndpointResponseError", c.error_code_valid, body)
        self.check("CheckTokenEndpointHttpStatus400", FAILURE,
                   lambda: ok(response.status_code == 400, "Token endpoint did not answer 400",
                              status=response.status_code))
        self.check("CheckTokenEndpointReturnedJsonContentType", FAILURE,
                   lambda: ok(response.headers.get("Content-Type", "").split(";")[0].strip() == "application/json",
                              "error is not JSON"))
        self.check("CheckErrorFromTokenEndpointResponseErrorInvalidGrant", FAILURE,
                   lambda: ok(body.get("error") == "invalid_grant", "error is not invalid_grant",
                              error=body.get("error")))


# --- discovery (Config OP, RP-Initiated and Back-Channel discovery modules) ---------------------

class OIDCCDiscoveryEndpointVerification(AbstractTestModule):
    name = "oidcc-discovery-endpoint-verification"

    def configure(self):
        self.get_dynamic_server_configuration()
        response = self.env["discovery_response"]
        self.check("EnsureDiscoveryEndpointResponseStatusCodeIs200", FAILURE,
                   lambda: ok(response.status_code == 200, "discovery endpoint did not answer 200",
                              status=response.status_code))
        self.check("CheckDiscoveryEndpointReturnedJsonContentType", FAILURE,
                   lambda: ok(response.headers.get("Content-Type", "").split(";")[0].strip() == "application/json",
                              "discovery document is not application/json",
                              content_type=response.headers.get("Content-Type")))

    def start(self):
        s = self.server
        self.check("OIDCCCheckDiscEndpointResponseTypesSupported", FAILURE, c.response_types_supported_basic, s)
        self.check("CheckDiscEndpointDiscoveryUrl", FAILURE, c.disc_discovery_url, self.ctx.discovery_url)
        self.check("CheckDiscEndpointIssuer", FAILURE, c.disc_issuer, s, self.ctx.discovery_url)
        self.check("CheckDiscEndpointIssuerIsValidUrl", FAILURE, c.disc_issuer_valid_url, s)
        self.check("ValidateServerMetadataAgainstSchema", FAILURE, c.metadata_schema, s)
        self.check("CheckForUnexpectedParametersInServerMetadata", WARNING, c.no_unexpected_metadata, s)
        self.check("CheckDiscEndpointSubjectTypesSupported", FAILURE, c.disc_subject_types, s)
        self.check("OIDCCCheckDiscEndpointIdTokenSigningAlgValuesSupported", FAILURE, c.disc_id_token_algs, s)
        if "userinfo_signing_alg_values_supported" in s:
            self.check("OIDCCCheckDiscEndpointUserinfoSigningAlgValuesSupported", FAILURE, c.disc_userinfo_algs, s)
        self.check("CheckDiscEndpointAuthorizationEndpoint", FAILURE, c.https_url, s.get("authorization_endpoint"),
                   "authorization_endpoint")
        self.check("CheckDiscEndpointTokenEndpoint", FAILURE, c.https_url, s.get("token_endpoint"), "token_endpoint")
        if "userinfo_endpoint" in s:
            self.check("CheckDiscEndpointUserinfoEndpoint", FAILURE, c.https_url, s["userinfo_endpoint"],
                       "userinfo_endpoint")
        else:
            self.check("CheckDiscEndpointUserinfoEndpoint", WARNING,
                       lambda: c.fail("userinfo_endpoint is missing (recommended by OpenID Connect Discovery 3)"))
        if "registration_endpoint" in s:
            self.check("CheckDiscEndpointRegistrationEndpoint", FAILURE, c.https_url, s["registration_endpoint"],
                       "registration_endpoint")
        self.check("CheckJwksUri", FAILURE, c.https_url, s.get("jwks_uri"), "jwks_uri")
        self.fetch_server_keys()
        self.validate_jwks()
        if "request_object_signing_alg_values_supported" in s:
            self.check("CheckDiscEndpointRequestObjectSigningAlgValuesSupportedIncludesRS256", WARNING,
                       lambda: ok("RS256" in s["request_object_signing_alg_values_supported"],
                                  "request_object_signing_alg_values_supported does not include RS256"))
        self.check("OIDCCCheckDiscEndpointClaimsSupported", WARNING, c.disc_claims_supported, s)
        self.check("OIDCCCheckDiscEndpointGrantTypesSupported", FAILURE, c.disc_grant_types, s)
        if "scopes_supported" in s:
            self.check("CheckDiscEndpointScopesSupportedContainsOpenId", FAILURE, c.disc_scopes_contain_openid, s)
        else:
            self.check("CheckDiscEndpointScopesSupportedContainsOpenId", WARNING,
                       lambda: c.fail("scopes_supported is missing (recommended by OpenID Connect Discovery 3)"))
        self.check("CheckDiscEndpointScopesSupportedSyntax", FAILURE, c.disc_scopes_syntax, s)
        self.check("CheckDiscEndpointLocalesSyntax", FAILURE, c.disc_locales_syntax, s)
        self.check("CheckDiscEndpointLocalesCanonicalCasing", WARNING, c.disc_locales_casing, s)
        self.check("CheckDiscEndpointAllEndpointsAreHttps", FAILURE, c.all_endpoints_https, s)
        self.check("EnsureServerConfigurationCodeChallengeMethodsSupportedIsAnArray", FAILURE,
                   c.disc_code_challenge_methods, s)


class OIDCCRpInitiatedLogoutDiscoveryEndpointVerification(AbstractTestModule):
    name = "oidcc-rp-initiated-logout-discovery-endpoint-verification"

    def configure(self):
        self.get_dynamic_server_configuration()

    def start(self):
        self.check("CheckDiscEndpointAllEndpointsAreHttps", FAILURE, c.all_endpoints_https, self.server)
        self.check("CheckDiscEndSessionEndpoint", FAILURE, c.disc_end_session_endpoint, self.server)


class OIDCCBackchannelLogoutDiscoveryEndpointVerification(AbstractTestModule):
    name = "oidcc-backchannel-logout-discovery-endpoint-verification"

    def configure(self):
        self.get_dynamic_server_configuration()

    def start(self):
        s = self.server
        self.check("CheckDiscEndpointAllEndpointsAreHttps", FAILURE, c.all_endpoints_https, s)
        self.check("CheckDiscEndpointBackchannelLogoutSupported", FAILURE, c.disc_boolean, s,
                   "backchannel_logout_supported", True)
        self.check("CheckDiscEndpointBackchannelLogoutSessionSupported", FAILURE, c.disc_boolean, s,
                   "backchannel_logout_session_supported", True)
        self.check("CheckDiscEndSessionEndpoint", FAILURE, c.disc_end_session_endpoint, s)
