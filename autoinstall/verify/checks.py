"""Stage 5, verify: run the plan's checks once and its tests twice in a sandbox, and judge the result."""
from __future__ import annotations

import time

from envs.base import Sandbox
from envs.spec import (
    DEFAULT_THRESHOLD,
    Check,
    CheckResult,
    Deselection,
    FailureClass,
    Plan,
    TestRun,
    Verification,
)
from envs.testrun import collects, run_tests, test_command

KILLED = 137
"""Exit status of a process ended by SIGKILL: the kernel's OOM killer inside a memory-limited sandbox."""


def run_failure_class(run: TestRun) -> FailureClass:
    """Why a test run that did not pass failed: timeout, memory, collection, or the tests themselves."""
    if run.timed_out:
        return "tests_timeout"
    if run.exit_code == KILLED and not run.collection_ok:
        return "memory_limit"
    return "collection_failed" if not run.collection_ok else "tests_failing"


def run_check(sandbox: Sandbox, check: Check, timeout_s: float, env: dict[str, str] | None = None) -> CheckResult:
    result = sandbox.exec(check.command, timeout=timeout_s, env=env)
    return CheckResult(name=check.name, kind=check.kind, command=check.command, required=check.required,
                       ok=result.ok, exit_code=result.exit_code, duration_s=result.duration_s,
                       output_tail=result.output[-2000:])


def judge(checks: list[CheckResult], runs: list[TestRun], threshold: float) -> tuple[bool, str]:
    """Verified when required checks pass, collection succeeds, >= 1 test passes, pass rate >= threshold."""
    failed = [c.name for c in checks if c.required and not c.ok]
    if failed:
        return False, f"required check(s) failed: {', '.join(failed)}"
    if not runs:
        return False, "no test command"
    last = runs[-1]
    if last.timed_out:
        return False, f"the test run hit its timeout after {last.duration_s:.0f} s and was killed"
    if last.exit_code == KILLED and not last.collection_ok:
        return False, ("the test run was killed (exit 137): most likely by the sandbox's memory limit "
                       "(--memory-mb raises it)")
    if not last.collection_ok:
        return False, f"test collection failed (exit {last.exit_code})"
    if last.passed == 0:
        return False, "no test passed"
    if last.pass_rate < threshold:
        return False, f"pass rate {last.pass_rate:.2f} below threshold {threshold:.2f}"
    return True, f"{last.passed}/{last.ran} tests passed"


def flaky_tests(runs: list[TestRun]) -> list[str]:
    outcomes: dict[str, set[str]] = {}
    for run in runs:
        for r in run.results:
            outcomes.setdefault(r.test_id, set()).add(r.outcome)
    return sorted(t for t, seen in outcomes.items() if len(seen) > 1)


def verify(sandbox: Sandbox, plan: Plan, deselected: list[Deselection], *, runs: int = 2,
           threshold: float = DEFAULT_THRESHOLD, timeout_s: float = 1800,
           env: dict[str, str] | None = None) -> Verification:
    """Run checks once and the tests `runs` times; the last run decides, differing outcomes are flaky."""
    started = time.monotonic()
    checks = [run_check(sandbox, c, timeout_s, env) for c in plan.checks if c.kind not in ("tests", "collect")
              or (c.kind == "collect" and collects(plan.test_runner))]
    test_runs = []
    if test_command(plan) is not None:
        for _ in range(runs):
            remaining = max(60.0, timeout_s - (time.monotonic() - started))
            test_runs.append(run_tests(sandbox, test_command(plan), plan.test_runner, deselected, remaining, env))
    ok, reason = judge(checks, test_runs, threshold)
    return Verification(verified=ok, reason=reason, checks=checks, runs=test_runs,
                        flaky=flaky_tests(test_runs), threshold=threshold)
