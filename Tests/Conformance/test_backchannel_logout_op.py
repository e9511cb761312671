"""Back-Channel Logout OP (OIDCCBackchannelRpInitiatedLogoutTestPlan)."""
from conformance.plans import BACKCHANNEL_LOGOUT_MODULES, module_tests

globals().update(module_tests(BACKCHANNEL_LOGOUT_MODULES, "Back-Channel Logout OP"))
