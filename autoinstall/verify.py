"""Run the verification suite in a sandbox: the checks, then the test command (twice), and judge it."""
from __future__ import annotations

import shlex
import time
import uuid

from pydantic import BaseModel, Field

from autoinstall.plan import Check, Plan
from autoinstall.testresults import TestRun, count, parse_junit, parse_summary
from envs.base import Sandbox

DEFAULT_THRESHOLD = 0.9


class Deselection(BaseModel):
    """A test (pytest node id) or test file left out of verification, and why."""

    test: str
    reason: str


class CheckResult(BaseModel):
    name: str
    kind: str
    command: str
    required: bool
    ok: bool
    exit_code: int
    duration_s: float
    output_tail: str = ""


class Verification(BaseModel):
    """The verdict on one environment."""

    verified: bool
    reason: str = ""
    checks: list[CheckResult] = Field(default_factory=list)
    runs: list[TestRun] = Field(default_factory=list)
    flaky: list[str] = Field(default_factory=list)
    """Tests whose outcome differed between runs."""
    threshold: float = DEFAULT_THRESHOLD

    @property
    def last_run(self) -> TestRun | None:
        return self.runs[-1] if self.runs else None


def test_command(plan: Plan) -> str | None:
    """The command that runs the project's tests, from the plan."""
    if plan.test_command:
        return plan.test_command
    return next((c.command for c in plan.checks if c.kind == "tests"), None)


def pytest_args(deselected: list[Deselection], junit_path: str) -> str:
    """Options appended to a pytest command: JUnit output, no cache, the deselections."""
    args = ["-p", "no:cacheprovider", "-o", "junit_family=xunit1", f"--junitxml={junit_path}", "--color=no"]
    for d in deselected:
        args += [f"--deselect={d.test}"] if "::" in d.test else [f"--ignore={d.test}"]
    return " ".join(shlex.quote(a) for a in args)


def run_tests(sandbox: Sandbox, plan: Plan, deselected: list[Deselection], timeout_s: float,
              env: dict[str, str] | None = None) -> TestRun:
    """Run the test command once and collect per-test results."""
    command = test_command(plan)
    if command is None:
        return TestRun(exit_code=5, collection_ok=False, output_tail="no test command")
    junit = f"/var/tmp/autoinstall-junit-{uuid.uuid4().hex[:8]}.xml"
    is_pytest = plan.test_runner == "pytest"
    full = f"{command} {pytest_args(deselected, junit)}" if is_pytest else command
    result = sandbox.exec(full, timeout=timeout_s, env=env)
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, output_tail=result.output[-4000:])
    if is_pytest:
        try:
            run.results = parse_junit(sandbox.read_file(junit).decode("utf-8", "replace"))
            sandbox.exec(["rm", "-f", junit])
        except (FileNotFoundError, Exception):  # noqa: BLE001 - a missing or broken report means no results
            run.results = []
        # No report (e.g. the project's addopts say `-p no:junitxml`): fall back to pytest's summary line.
        run.counts = count(run.results) if run.results else parse_summary(result.output)
        run.collection_ok = result.exit_code in (0, 1, 5) and not result.timed_out
    else:
        run.counts = parse_summary(result.output)
        run.collection_ok = run.ran > 0 or result.exit_code == 0
    return run


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
              or (c.kind == "collect" and plan.test_runner == "pytest")]
    test_runs = []
    if test_command(plan) is not None:
        for _ in range(runs):
            remaining = max(60.0, timeout_s - (time.monotonic() - started))
            test_runs.append(run_tests(sandbox, plan, deselected, remaining, env))
    ok, reason = judge(checks, test_runs, threshold)
    return Verification(verified=ok, reason=reason, checks=checks, runs=test_runs,
                        flaky=flaky_tests(test_runs), threshold=threshold)
