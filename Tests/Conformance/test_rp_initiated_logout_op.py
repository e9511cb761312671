"""RP-Initiated Logout OP (OIDCCRpInitiatedLogoutTestPlan)."""
from conformance.plans import RP_INITIATED_LOGOUT_MODULES, module_tests

globals().update(module_tests(RP_INITIATED_LOGOUT_MODULES, "RP-Initiated Logout OP"))
