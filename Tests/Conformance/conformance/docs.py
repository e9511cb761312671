"""docs/conformance.md's results table: reading it (for the test that every result of the run
is the one documented, and every WARNING and SKIPPED has its sentence) and writing it from a
run's test-artifacts/conformance.json, keeping the sentences already written:

    python -m conformance.docs ../../test-artifacts/conformance.json   # prints the table
"""

import json
import re
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "conformance.md"
ROW = re.compile(r"^\|\s*`([a-z0-9-]+)`\s*\|\s*([^|]+?)\s*\|\s*([A-Z]+)\s*\|\s*(.*?)\s*\|\s*$")
HEADER = "| Module | Plan | Result | Why |\n|---|---|---|---|\n"


def documented(path=DOC):
    """{(module, plan): (result, why)} from the table."""
    rows = {}
    for line in path.read_text().splitlines():
        match = ROW.match(line)
        if match:
            module, plan, result, why = match.groups()
            rows[(module, plan)] = (result, why)
    return rows


def table(runs, previous):
    lines = [HEADER.rstrip("\n")]
    for run in runs:
        key = (run["module"], run["plan"])
        why = ""
        if run["result"] != "PASSED":
            old = previous.get(key)
            why = old[1] if old and old[0] == run["result"] and old[1] else "TODO: " + run["reason"][:200]
        lines.append(f"| `{run['module']}` | {run['plan']} | {run['result']} | {why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    runs = json.loads(Path(sys.argv[1]).read_text())
    sys.stdout.write(table(runs, documented()))
