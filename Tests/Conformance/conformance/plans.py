"""The five certification plans as the suite lists them (OIDCCBasicTestPlan,
OIDCCFormPostBasicTestPlan, OIDCCConfigTestPlan, OIDCCRpInitiatedLogoutTestPlan,
OIDCCBackchannelRpInitiatedLogoutTestPlan), and the pytest functions made from them: one test
per module and variant, named after the module's testName (test_oidcc_server,
test_oidcc_server_form_post, …)."""

from . import logout as l
from . import oidcc as o
from .results import FAILED, REGISTRY

BASIC_MODULES = [
    (o.OIDCCServerTestModule, "client_secret_basic"),
    (o.OIDCCResponseTypeMissing, "client_secret_basic"),
    (o.OIDCCIdTokenSignature, "client_secret_basic"),
    (o.OIDCCIdTokenUnsigned, "client_secret_basic"),
    (o.OIDCCUserInfoGet, "client_secret_basic"),
    (o.OIDCCUserInfoPostHeader, "client_secret_basic"),
    (o.OIDCCUserInfoPostBody, "client_secret_basic"),
    (o.OIDCCEnsureRequestWithoutNonceSucceedsForCodeFlow, "client_secret_basic"),
    (o.OIDCCScopeProfile, "client_secret_basic"),
    (o.OIDCCScopeEmail, "client_secret_basic"),
    (o.OIDCCScopeAddress, "client_secret_basic"),
    (o.OIDCCScopePhone, "client_secret_basic"),
    (o.OIDCCScopeAll, "client_secret_basic"),
    (o.OIDCCAlternateHappyFlow, "client_secret_basic"),
    (o.OIDCCDisplayPage, "client_secret_basic"),
    (o.OIDCCDisplayPopup, "client_secret_basic"),
    (o.OIDCCPromptLogin, "client_secret_basic"),
    (o.OIDCCPromptNoneNotLoggedIn, "client_secret_basic"),
    (o.OIDCCPromptNoneLoggedIn, "client_secret_basic"),
    (o.OIDCCMaxAge1, "client_secret_basic"),
    (o.OIDCCMaxAge10000, "client_secret_basic"),
    (o.OIDCCEnsureRequestWithUnknownParameterSucceeds, "client_secret_basic"),
    (o.OIDCCIdTokenHint, "client_secret_basic"),
    (o.OIDCCLoginHint, "client_secret_basic"),
    (o.OIDCCUiLocales, "client_secret_basic"),
    (o.OIDCCClaimsLocales, "client_secret_basic"),
    (o.OIDCCEnsureRequestWithAcrValuesSucceeds, "client_secret_basic"),
    (o.OIDCCAuthCodeReuse, "client_secret_basic"),
    (o.OIDCCAuthCodeReuseAfter30Seconds, "client_secret_basic"),
    (o.OIDCCEnsureRegisteredRedirectUri, "client_secret_basic"),
    (o.OIDCCEnsurePostRequestSucceeds, "client_secret_basic"),
    (o.OIDCCServerTestClientSecretPost, "client_secret_post"),
    (o.OIDCCRequestUriUnsignedSupportedCorrectlyOrRejectedAsUnsupported, "client_secret_basic"),
    (o.OIDCCUnsignedRequestObjectSupportedCorrectlyOrRejectedAsUnsupported, "client_secret_basic"),
    (o.OIDCCClaimsEssential, "client_secret_basic"),
    (o.OIDCCEnsureRequestObjectWithRedirectUri, "client_secret_basic"),
    (o.OIDCCRefreshToken, "client_secret_basic"),
    (o.OIDCCEnsureRequestWithValidPkceSucceeds, "client_secret_basic"),
]

CONFIG_MODULES = [(o.OIDCCDiscoveryEndpointVerification, "discovery, static_client")]

RP_INITIATED_LOGOUT_MODULES = [
    (o.OIDCCRpInitiatedLogoutDiscoveryEndpointVerification, "discovery"),
] + [(module, "discovery, client_secret_basic, default") for module in (
    l.OIDCCRpInitiatedLogout,
    l.OIDCCRpInitiatedLogoutBadLogoutRedirectUri,
    l.OIDCCRpInitiatedLogoutModifiedIdTokenHint,
    l.OIDCCRpInitiatedLogoutNoIdTokenHint,
    l.OIDCCRpInitiatedLogoutNoParams,
    l.OIDCCRpInitiatedLogoutNoPostLogoutRedirectUri,
    l.OIDCCRpInitiatedLogoutNoState,
    l.OIDCCRpInitiatedLogoutOnlyState,
    l.OIDCCRpInitiatedLogoutQueryAddedToLogoutRedirectUri,
    l.OIDCCRpInitiatedLogoutBadIdTokenHint,
)]

BACKCHANNEL_LOGOUT_MODULES = [
    (o.OIDCCBackchannelLogoutDiscoveryEndpointVerification, "discovery"),
    (l.OIDCCBackChannelRpInitiatedLogout, "discovery, client_secret_basic, default"),
]


def _test(module, plan, variant):
    def test(context):
        run = module(context, plan, variant).run()
        REGISTRY.add(run)
        assert run.result != FAILED, f"{run.module} ({run.plan}): {run.reason}"
    return test


def module_tests(modules, plan, response_mode=None, suffix=""):
    """{"test_<testName>": function} for every module of the plan, in the plan's order."""
    result = {}
    for module, variant in modules:
        if response_mode is not None and variant.startswith("client_secret"):
            variant = f"code, {variant}, {response_mode}"
        name = "test_" + module.name.replace("-", "_") + suffix
        test = _test(module, plan, variant)
        test.__name__ = name
        test.__doc__ = f"{module.name} ({plan}: {variant})"
        result[name] = test
    return result
