"""Form Post OP (OIDCCFormPostBasicTestPlan): the Basic OP modules with response_mode=form_post."""
from conformance.plans import BASIC_MODULES, module_tests

globals().update(module_tests(BASIC_MODULES, "Form Post OP", response_mode="form_post", suffix="_form_post"))
