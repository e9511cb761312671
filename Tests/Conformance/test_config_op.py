"""Config OP (OIDCCConfigTestPlan): the discovery document."""
from conformance.plans import CONFIG_MODULES, module_tests

globals().update(module_tests(CONFIG_MODULES, "Config OP"))
