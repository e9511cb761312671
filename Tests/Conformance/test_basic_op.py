"""Basic OP (OIDCCBasicTestPlan): response_type code, static clients, discovery, default response mode."""
from conformance.plans import BASIC_MODULES, module_tests

globals().update(module_tests(BASIC_MODULES, "Basic OP", response_mode="default"))
