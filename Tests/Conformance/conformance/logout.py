"""The RP-Initiated Logout OP and Back-Channel Logout OP modules
(AbstractOIDCCRpInitiatedLogout and its subclasses, OIDCCBackChannelRpInitiatedLogout)."""

import base64
import time
import urllib.parse

import jwt

from . import conditions as c
from .browser import Callback
from .oidcc import OIDCCServerTest, ok, random_string, text_of
from .results import FAILURE, WARNING

ALG_NONE_HEADER = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()


class AbstractOIDCCRpInitiatedLogout(OIDCCServerTest):
    """A normal authorization, then the user agent goes to end_session_endpoint; the
    subclass says what must happen there. Modules that expect the OP to return to the
    post_logout_redirect_uri then authorize again with prompt=none, which must fail."""

    # What the OP must do at the end-session endpoint: "redirect" (to the registered
    # post_logout_redirect_uri), "error_or_confirm" (must not redirect; an error page or a
    # logout confirmation), or "logged_out" (a "you are logged out" page, no redirect).
    expect = "redirect"
    forbidden_redirect_message = ""

    def __init__(self, *args):
        super().__init__(*args)
        self.first_time = True

    def configure(self):
        self.env["post_logout_redirect_uri"] = self.client["post_logout_redirect_uri"]  # CreatePostLogoutRedirectUri
        super().configure()

    def on_configure(self):
        self.env["requested_state_length"] = 128

    def create_authorization_request(self):
        request = self.authorization_request_steps()
        if not self.first_time:
            request["prompt"] = "none"
        return request

    def on_authorization_callback_response(self, params):
        if self.first_time:
            self.first_time = False
            super().on_authorization_callback_response(params)
        else:
            self.perform_generic_authorization_endpoint_error_response_validation(params)
            self.check("CheckErrorFromAuthorizationEndpointIsOneThatRequiredAUserInterface", FAILURE,
                       lambda: ok(params.get("error") in ("interaction_required", "login_required",
                                                          "account_selection_required", "consent_required"),
                                  "'error' field has an unexpected value: the user is still signed in after the "
                                  "logout", actual=params.get("error")))

    def on_page(self, page):
        if not self.first_time:
            self.run_record.fail("The authorization request with prompt=none after the logout showed a page "
                                 f"(HTTP {page.status}) instead of returning an error to the client")
        super().on_page(page)

    def on_post_authorization_flow_complete(self):
        self.env["end_session_state"] = random_string(10)  # CreateRandomEndSessionState
        request = {"id_token_hint": self.env["id_token"]["value"],  # CreateEndSessionEndpointRequest
                   "post_logout_redirect_uri": self.env["post_logout_redirect_uri"],
                   "state": self.env["end_session_state"]}
        self.customise_end_session_endpoint_request(request)
        self.env["end_session_endpoint_request"] = request
        url = self.server["end_session_endpoint"]
        if request:
            url += "?" + urllib.parse.urlencode(request)
        self.browser.confirm_logout = self.expect != "error_or_confirm"
        self.receiver_index = self.ctx.receiver.count()
        self.backchannel_index = self.ctx.backchannel.count()
        outcome = self.browser.navigate(url)
        if isinstance(outcome, Callback):
            if not outcome.request["path"].endswith("/post_logout_redirect"):
                self.run_record.fail(f"The OP sent the user agent to an unexpected URL {outcome.request['path']}")
            if self.expect != "redirect":
                self.run_record.fail(self.forbidden_redirect_message)
            self.handle_post_logout_redirect(outcome.request)
        else:
            self.on_logout_page(outcome)

    def customise_end_session_endpoint_request(self, request):
        pass

    def on_logout_page(self, page):
        if self.expect == "redirect":
            self.run_record.fail("The OP did not redirect to the post_logout_redirect_uri: it showed a page "
                                 f"(HTTP {page.status}) at {page.url}: {text_of(page.text)[:200]}")
        elif self.expect == "error_or_confirm":
            self.check(self.placeholder, FAILURE,
                       lambda: ok(page.status >= 400 or 'action="/logout/confirm"' in page.text,
                                  "The OP showed neither an error page nor a logout confirmation", status=page.status,
                                  text=text_of(page.text)[:200]))
        else:
            self.check("ExpectSuccessfulLogoutPage", FAILURE, self.successful_logout_page, page)

    def successful_logout_page(self, page):
        """The page the tester would photograph says the user is logged out: the harness checks
        the page loaded and the browser session has ended."""
        ok(page.status == 200, "The logout did not end on a page", status=page.status)
        account = self.browser.session.get(self.ctx.issuer + "/api/account", timeout=10)
        ok(account.status_code == 401, "The user is still signed in after the logout", status=account.status_code)

    def handle_post_logout_redirect(self, request):
        self.env["post_logout_redirect"] = request
        self.validate_logout_results(request)

    def validate_logout_results(self, request):
        self.check("CheckPostLogoutState", FAILURE, self.check_post_logout_state, request)
        self.check("CheckForUnexpectedParametersInPostLogoutRedirect", WARNING, self.no_unexpected_params, request)
        self.perform_authorization_flow()

    def check_post_logout_state(self, request):
        state = request["query"].get("state")
        if state is None:
            c.fail("state not present in query params passed to post logout redirect uri.")
        if state != self.env["end_session_state"]:
            c.fail("state in query params passed to post logout redirect uri does not match state passed in the "
                   "end_session request.", actual=state, expected=self.env["end_session_state"])

    @staticmethod
    def no_unexpected_params(request):
        unexpected = {k: v for k, v in request["query"].items() if k != "state"}
        if unexpected:
            c.fail("post_logout_redirect includes unexpected parameters in url query.", unexpected=unexpected)


class OIDCCRpInitiatedLogout(AbstractOIDCCRpInitiatedLogout):
    name = "oidcc-rp-initiated-logout"


class OIDCCRpInitiatedLogoutNoState(AbstractOIDCCRpInitiatedLogout):
    name = "oidcc-rp-initiated-logout-no-state"

    def customise_end_session_endpoint_request(self, request):
        del request["state"]

    def validate_logout_results(self, request):
        self.check("CheckNoPostLogoutState", FAILURE,
                   lambda: ok("state" not in request["query"], "state present in the post logout redirect although "
                              "none was sent", state=request["query"].get("state")))
        self.check("CheckForUnexpectedParametersInPostLogoutRedirect", WARNING, self.no_unexpected_params, request)
        self.perform_authorization_flow()


class ErrorOrConfirm(AbstractOIDCCRpInitiatedLogout):
    expect = "error_or_confirm"


class OIDCCRpInitiatedLogoutBadLogoutRedirectUri(ErrorOrConfirm):
    name = "oidcc-rp-initiated-logout-bad-post-logout-redirect-uri"
    placeholder = "ExpectPostLogoutRedirectUriNotRegisteredErrorPage"
    forbidden_redirect_message = ("OP has incorrectly called the registered post_logout_redirect_uri even though a "
                                  "different uri was requested.")

    def customise_end_session_endpoint_request(self, request):
        request["post_logout_redirect_uri"] = self.ctx.receiver.base + "/bad_post_logout_redirect_uri"


class OIDCCRpInitiatedLogoutQueryAddedToLogoutRedirectUri(ErrorOrConfirm):
    name = "oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri"
    placeholder = "ExpectPostLogoutRedirectUriNotRegisteredErrorPage"
    forbidden_redirect_message = ("OP has incorrectly called the registered post_logout_redirect_uri even though a "
                                  "different uri was requested.")

    def customise_end_session_endpoint_request(self, request):
        request["post_logout_redirect_uri"] += "?foo=bar"


class OIDCCRpInitiatedLogoutModifiedIdTokenHint(ErrorOrConfirm):
    name = "oidcc-rp-initiated-logout-modified-id-token-hint"
    placeholder = "ExpectInvalidIdTokenHintErrorPage"
    forbidden_redirect_message = ("OP has incorrectly called the registered post_logout_redirect_uri even though an "
                                  "invalid id_token_hint was provided.")

    def customise_end_session_endpoint_request(self, request):
        payload = self.env["id_token"]["value"].split(".")[1]
        request["id_token_hint"] = f"{ALG_NONE_HEADER}.{payload}."  # ChangeIdTokenToAlgNone


class OIDCCRpInitiatedLogoutBadIdTokenHint(ErrorOrConfirm):
    name = "oidcc-rp-initiated-logout-bad-id-token-hint"
    placeholder = "ExpectInvalidIdTokenHintErrorPage"
    forbidden_redirect_message = ("OP has incorrectly called the registered post_logout_redirect_uri even though an "
                                  "invalid id_token_hint was provided.")

    def customise_end_session_endpoint_request(self, request):
        # GenerateFakeIdTokenClaims + SignFakeIdToken (keys generated from the client secret)
        now = int(time.time())
        claims = {"iss": self.client["client_id"], "sub": "SubjectID", "aud": self.server["issuer"],
                  "nonce": "flibble", "iat": now, "exp": now + 300}
        request["id_token_hint"] = jwt.encode(claims, self.client["client_secret"], algorithm="HS256")


class OIDCCRpInitiatedLogoutNoIdTokenHint(ErrorOrConfirm):
    name = "oidcc-rp-initiated-logout-no-id-token-hint"
    placeholder = "ExpectIdTokenHintRequiredErrorPage"
    forbidden_redirect_message = ("OP has incorrectly called the registered post_logout_redirect_uri even though no "
                                  "id_token_hint was provided.")

    def customise_end_session_endpoint_request(self, request):
        del request["id_token_hint"]


class LoggedOutPage(AbstractOIDCCRpInitiatedLogout):
    expect = "logged_out"
    forbidden_redirect_message = ("OP has incorrectly called the registered post_logout_redirect_uri when it wasn't in "
                                  "the request.")


class OIDCCRpInitiatedLogoutNoParams(LoggedOutPage):
    name = "oidcc-rp-initiated-logout-no-params"

    def customise_end_session_endpoint_request(self, request):
        request.clear()


class OIDCCRpInitiatedLogoutNoPostLogoutRedirectUri(LoggedOutPage):
    name = "oidcc-rp-initiated-logout-no-post-logout-redirect-uri"

    def customise_end_session_endpoint_request(self, request):
        del request["post_logout_redirect_uri"]


class OIDCCRpInitiatedLogoutOnlyState(LoggedOutPage):
    name = "oidcc-rp-initiated-logout-only-state"

    def customise_end_session_endpoint_request(self, request):
        del request["id_token_hint"]
        del request["post_logout_redirect_uri"]


class OIDCCBackChannelRpInitiatedLogout(AbstractOIDCCRpInitiatedLogout):
    """Also waits for the back-channel logout request (OIDC Back-Channel Logout 2.5) for this
    session and checks its logout token."""

    name = "oidcc-backchannel-rp-initiated-logout"
    wait_seconds = 15

    def handle_post_logout_redirect(self, request):
        self.env["post_logout_redirect"] = request
        sid = self.env["id_token"]["claims"].get("sid")
        sub = self.env["id_token"]["claims"].get("sub")
        deadline = time.time() + self.wait_seconds
        backchannel = None
        while backchannel is None and time.time() < deadline:
            for candidate in self.ctx.backchannel.since(self.backchannel_index, "/backchannel_logout"):
                token = candidate["form"].get("logout_token", "")
                try:
                    claims = c.parse_jwt(token, "logout_token")["claims"]
                except Exception:  # noqa: BLE001 - judged below if it is the only one
                    claims = {}
                if (sid is not None and claims.get("sid") == sid) or (sid is None and claims.get("sub") == sub):
                    backchannel = candidate
                    break
            else:
                time.sleep(0.1)
        if backchannel is None:
            self.run_record.fail("The OP did not send a back-channel logout request for this session to the "
                                 f"backchannel_logout_uri within {self.wait_seconds} seconds")
        self.validate_backchannel(backchannel)
        super().handle_post_logout_redirect(request)

    def validate_backchannel(self, request):
        self.check("EnsureIncomingTls12WithSecureCipherOrTls13", WARNING,
                   lambda: ok(request["tls_version"] in ("TLSv1.2", "TLSv1.3"),
                              "back-channel logout request did not arrive over TLS 1.2 or later",
                              version=request["tls_version"]))
        self.check("EnsureIncomingTls13", WARNING,
                   lambda: ok(request["tls_version"] == "TLSv1.3", "back-channel logout request did not arrive over TLS 1.3",
                              version=request["tls_version"]))
        token = self.require("ExtractLogoutTokenFromBackchannelLogoutRequest", self.extract_logout_token, request)
        self.check("CheckForUnexpectedParametersInBackchannelLogoutRequest", WARNING,
                   lambda: ok(set(request["form"]) == {"logout_token"},
                              "backchannel_logout_request includes unexpected parameters",
                              unexpected=sorted(set(request["form"]) - {"logout_token"})))
        self.check("ValidateLogoutTokenSignature", FAILURE, c.verify_signature, token, self.jwks, "logout_token")
        self.check("ValidateLogoutTokenClaims", FAILURE, self.validate_logout_token_claims, token["claims"])
        id_claims = self.env["id_token"]["claims"]
        if "sub" in token["claims"]:
            self.check("CheckIdTokenSubMatchesLogoutToken", FAILURE,
                       lambda: ok(token["claims"]["sub"] == id_claims.get("sub"), "sub in the logout token differs "
                                  "from the id_token's", logout=token["claims"]["sub"], id_token=id_claims.get("sub")))
        if "sid" in token["claims"]:
            self.check("CheckIdTokenSidMatchesLogoutToken", FAILURE,
                       lambda: ok(token["claims"]["sid"] == id_claims.get("sid"), "sid in the logout token differs "
                                  "from the id_token's", logout=token["claims"]["sid"], id_token=id_claims.get("sid")))
        self.check("CheckLogoutTokenNoNonce", FAILURE,
                   lambda: ok("nonce" not in token["claims"], "logout token contains a nonce"))
        self.check("CheckLogoutTokenHasSubOrSid", FAILURE,
                   lambda: ok("sub" in token["claims"] or "sid" in token["claims"],
                              "logout token contains neither sub nor sid"))

    @staticmethod
    def extract_logout_token(request):
        ok(request["method"] == "POST", "back-channel logout request is not a POST", method=request["method"])
        ok(request["headers"].get("content-type", "").split(";")[0].strip() == "application/x-www-form-urlencoded",
           "back-channel logout request is not form encoded", content_type=request["headers"].get("content-type"))
        return c.parse_jwt(request["form"].get("logout_token"), "logout_token")

    def validate_logout_token_claims(self, claims):
        """ValidateLogoutTokenClaims (OIDC Back-Channel Logout 2.4)."""
        now = time.time()
        if "iss" not in claims:
            c.fail("'iss' claim missing")
        if claims["iss"] != self.server["issuer"]:
            c.fail("Issuer mismatch", expected=self.server["issuer"], actual=claims["iss"])
        aud = claims.get("aud")
        if aud is None:
            c.fail("'aud' claim missing")
        client_id = self.client["client_id"]
        if (isinstance(aud, list) and client_id not in aud) or (not isinstance(aud, list) and aud != client_id):
            c.fail("'aud' is not our client id", expected=client_id, actual=aud)
        iat = claims.get("iat")
        if not isinstance(iat, (int, float)):
            c.fail("'iat' claim missing")
        if now + c.SKEW < iat:
            c.fail("Token 'iat' in the future")
        if now - 86400 > iat:
            c.fail("'iat' is more than 1 day in the past")
        if "jti" not in claims:
            c.fail("jti missing")
        events = claims.get("events")
        if events is None:
            c.fail("'events' claim missing")
        if not isinstance(events, dict):
            c.fail("'events' claim is not a json object")
        if len(events) != 1:
            c.fail("'events' object does not contain exactly 1 entry", events=events)
        value = events.get("http://schemas.openid.net/event/backchannel-logout")
        if value is None:
            c.fail("http://schemas.openid.net/event/backchannel-logout entry is missing from 'events' claim")
        if not isinstance(value, dict):
            c.fail("http://schemas.openid.net/event/backchannel-logout is not a json object")
        if value:
            c.fail("http://schemas.openid.net/event/backchannel-logout is not an empty object")
