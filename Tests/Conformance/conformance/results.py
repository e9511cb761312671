"""How a module ends, as in the conformance suite: every condition a module calls has a
severity (FAILURE or WARNING); a condition that does not hold with severity FAILURE fails the
module, with WARNING it leaves a warning; `stop` conditions end the module at once (the
suite's callAndStopOnFailure); a module may also end SKIPPED where the suite calls
fireTestSkipped, with the suite's reason."""

import json
import threading

FAILURE = "FAILURE"
WARNING = "WARNING"
INFO = "INFO"

PASSED = "PASSED"
FAILED = "FAILED"
SKIPPED = "SKIPPED"
WARNING_RESULT = "WARNING"


class ConditionError(Exception):
    """Raised by a condition that does not hold; the message is the suite's."""


class Stop(Exception):
    """Ends the module after a condition called with stop-on-failure did not hold."""


class Skipped(Exception):
    """The suite's fireTestSkipped: the module cannot be tested against this server."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class Run:
    """One module in one plan and variant: the conditions it called and their outcome."""

    def __init__(self, module, plan, variant):
        self.module = module
        self.plan = plan
        self.variant = variant
        self.conditions = []
        self.skipped = None
        self.error = None

    def check(self, name, severity, condition, *args, **kwargs):
        """callAndContinueOnFailure: records the outcome; returns the condition's value, or
        None when it did not hold."""
        try:
            value = condition(*args, **kwargs)
        except ConditionError as error:
            self.conditions.append({"condition": name, "severity": severity, "ok": False, "message": str(error)})
            return None
        self.conditions.append({"condition": name, "severity": severity, "ok": True})
        return value if value is not None else True

    def require(self, name, condition, *args, **kwargs):
        """callAndStopOnFailure: a condition that does not hold fails the module and ends it."""
        try:
            value = condition(*args, **kwargs)
        except ConditionError as error:
            self.conditions.append({"condition": name, "severity": FAILURE, "ok": False, "message": str(error)})
            raise Stop(name) from error
        self.conditions.append({"condition": name, "severity": FAILURE, "ok": True})
        return value

    def fail(self, message):
        """The suite's TestFailureException (e.g. a forbidden redirect happened)."""
        self.conditions.append({"condition": "TestFailure", "severity": FAILURE, "ok": False, "message": message})
        raise Stop(message)

    def failures(self, severity):
        return [c for c in self.conditions if not c["ok"] and c["severity"] == severity]

    @property
    def result(self):
        if self.error is not None or self.failures(FAILURE):
            return FAILED
        if self.skipped is not None:
            return SKIPPED
        if self.failures(WARNING):
            return WARNING_RESULT
        return PASSED

    @property
    def reason(self):
        if self.error is not None:
            return self.error
        failed = self.failures(FAILURE) or self.failures(WARNING)
        if failed:
            return "; ".join(f"{c['condition']}: {c['message']}" for c in failed)
        return self.skipped or ""

    def as_dict(self):
        return {"module": self.module, "plan": self.plan, "variant": self.variant, "result": self.result,
                "reason": self.reason, "conditions": self.conditions}


class Registry:
    """Every module run of this pytest session, for the summary table and the JSON file."""

    def __init__(self):
        self.runs = []
        self.lock = threading.Lock()

    def add(self, run):
        with self.lock:
            self.runs.append(run)

    def write(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([run.as_dict() for run in self.runs], indent=2) + "\n")


REGISTRY = Registry()
