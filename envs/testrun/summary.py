"""Summary lines (unittest's `Ran N tests` + `FAILED (...)`, pytest's): counts, for a runner that names no test."""
from __future__ import annotations

import re

from envs.base import Sandbox
from envs.spec import Deselection, TestRun

_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.M)
_PYTEST_SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


def parse_summary(output: str) -> dict[str, int]:
    """Counts from a unittest-style ("Ran N tests ... FAILED (failures=1)") or pytest-style summary."""
    ran = _UNITTEST_RAN.findall(output)
    if ran:
        total = int(ran[-1])
        counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        ends = _UNITTEST_END.findall(output)
        if ends and ends[-1][1]:
            for part in ends[-1][1].split(","):
                key, _, value = part.strip().partition("=")
                mapped = {"failures": "failed", "errors": "error", "skipped": "skipped"}.get(key)
                if mapped and value.isdigit():
                    counts[mapped] += int(value)
        counts["passed"] = max(0, total - counts["failed"] - counts["error"] - counts["skipped"])
        return counts
    lines = [ln for ln in output.splitlines() if _PYTEST_SUMMARY.search(ln)]
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    if lines:
        for n, word in _PYTEST_SUMMARY.findall(lines[-1]):
            key = {"errors": "error", "xfailed": "skipped", "xpassed": "passed"}.get(word, word)
            counts[key] = counts.get(key, 0) + int(n)
    return counts


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run `command`; counts from its summary line, its exit status honoured."""
    result = sandbox.exec(command, timeout=timeout_s, env=env)
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=result.output[-4000:])
    run.counts = parse_summary(result.output)
    run.collection_ok = run.ran > 0 or result.exit_code == 0
    if result.exit_code != 0 and run.ran and not (run.counts["failed"] or run.counts["error"]):
        # The runner's exit status is the verdict too: a failure its summary line did not count.
        run.counts["error"] += 1
    return run
