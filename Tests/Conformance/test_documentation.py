"""docs/conformance.md tells the truth about this run: every module that ran has a row with
the result it had, and every WARNING and SKIPPED row says why (a sentence, not a TODO). Runs
after all the plans (see conftest.py)."""

from conformance.docs import DOC, documented
from conformance.results import REGISTRY


def test_conformance_results_are_documented():
    assert REGISTRY.runs, "no conformance module ran before this test"
    rows = documented()
    problems = []
    for run in REGISTRY.runs:
        row = rows.get((run.module, run.plan))
        if row is None:
            problems.append(f"{run.module} ({run.plan}): no row in {DOC.name}")
            continue
        result, why = row
        if result != run.result:
            problems.append(f"{run.module} ({run.plan}): {DOC.name} says {result}, the run says {run.result}: "
                            f"{run.reason[:200]}")
        if run.result in ("WARNING", "SKIPPED") and (not why or why.startswith("TODO")):
            problems.append(f"{run.module} ({run.plan}): {run.result} needs a sentence in {DOC.name} saying why")
    assert not problems, "\n".join(problems)
