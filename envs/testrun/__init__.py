"""Running a test command and reading its results, by runner name: the builder's verifier, the runtime's
reward and the exporters' scoring scripts all run tests this one way.

Files, one per kind of runner: `pytest_runner.py` (JUnit XML per test, `--collect-only` counts),
`go_runner.py` (`go test -json` events, `go test -list` counts), `unittest_runner.py` (unittest, testtools
and custom Python runners: their verbose lines per test, their exit status honoured, `--list` counts),
`summary.py` (summary lines, when a runner prints nothing per test), `junit.py` (the JUnit XML parser),
`timeout_plugin.py` (the per-test timeout every pytest run loads, stdlib only, never left in an image),
`pytest_output.py` (hung tests and uncollectable files read from a run).
A language adds a module and one entry in RUNNERS (and COLLECTORS when it can count its tests without
running them).
"""
from __future__ import annotations

import re
from collections.abc import Callable

from envs.base import ProcessLimit, Sandbox
from envs.errors import EnvError
from envs.spec import Deselection, Plan, TestRun, TestRunner
from envs.testrun import (
    cargo_runner,
    go_runner,
    maven_runner,
    node_runner,
    pytest_runner,
    summary,
    unittest_runner,
)
from envs.testrun.go_runner import go_test_command, parse_go_test_json
from envs.testrun.junit import count, parse_junit
from envs.testrun.pytest_output import TIMEOUT_ENV, collection_errors, hung_tests, static_test_count
from envs.testrun.pytest_runner import pytest_args, selection_args
from envs.testrun.summary import parse_summary

Run = Callable[[Sandbox, str, list[Deselection], float, "dict[str, str] | None"], TestRun]
Collect = Callable[[Sandbox, str, list[Deselection], float, "dict[str, str] | None"], "tuple[int | None, str]"]
RUNNERS: dict[str, Run] = {"pytest": pytest_runner.run, "go": go_runner.run, "cargo": cargo_runner.run,
                           "unittest": unittest_runner.run, "custom": unittest_runner.run}
RUNNERS["node"] = node_runner.run
RUNNERS["maven"] = maven_runner.run
"""How each runner is run and read; any other name is read from its summary line."""
COLLECTORS: dict[str, Collect] = {"pytest": pytest_runner.collect, "go": go_runner.collect,
                                   "cargo": cargo_runner.collect, "unittest": unittest_runner.collect}
"""Runners that can count a suite without running it, so that a `collect` check means something."""
COLLECTORS["maven"] = maven_runner.collect  # Surefire cannot list a suite: counts from a run
COLLECTORS["node"] = node_runner.collect  # mocha --dry-run; jest, vitest, node:test: every test skipped
COLLECTING_RUNNERS = frozenset(COLLECTORS)
DEFAULT_PER_TEST_TIMEOUT_S = 120.0
"""Seconds one test may run when the caller does not say (the builder's Budgets do)."""
DEFAULT_COMMANDS = {"pytest": "python -m pytest"}
"""The runner run with nothing but its own configuration: what "the default collection" means."""


def collects(runner: str) -> bool:
    """True when `runner` can collect tests without running them (its `collect` checks are meaningful)."""
    return runner in COLLECTORS


def test_command(plan: Plan) -> str | None:
    """The command that runs the project's tests, from the plan."""
    if plan.test_command:
        return plan.test_command
    return next((c.command for c in plan.checks if c.kind == "tests"), None)


def run_tests(sandbox: Sandbox, command: str | None, runner: TestRunner, deselected: list[Deselection],
              timeout_s: float, env: dict[str, str] | None = None, per_test_timeout_s: float | None = None) -> TestRun:
    """Run a test command once in `sandbox` and collect per-test results.

    Args:
        sandbox: a started sandbox whose workdir holds the project.
        command: the project's test command; None means there are no tests.
        runner: how to run and read it (RUNNERS; another name: its summary line).
        deselected: tests (ids) or files/packages left out, as the runner takes them.
        timeout_s: the command's timeout.
        env: extra environment variables for the command.
        per_test_timeout_s: seconds one test may run before it is stopped and failed (pytest: the
            `autoinstall_timeout` plugin); None: a fraction of `timeout_s`, at most DEFAULT_PER_TEST_TIMEOUT_S.
    """
    if command is None:
        return TestRun(exit_code=5, collection_ok=False, output_tail="no test command")
    per_test = per_test_timeout_s if per_test_timeout_s is not None else min(DEFAULT_PER_TEST_TIMEOUT_S,
                                                                             timeout_s / 4)
    env = {**(env or {}), TIMEOUT_ENV: f"{per_test:g}"}
    before = forks_refused(sandbox)
    run = RUNNERS.get(runner, summary.run)(sandbox, command, deselected, timeout_s, env)
    after = forks_refused(sandbox) if before is not None else None
    if before is not None and after is not None:
        run.forks_refused = max(0, after - before)
    return run


PIDS_EVENTS = "cat /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events 2>/dev/null"
"""The sandbox's own cgroup (v1, then v2): `max N` counts the forks its pids limit has refused."""


def forks_refused(sandbox: Sandbox) -> int | None:
    """How many forks the sandbox's pids limit has refused so far; None where the cgroup cannot be read."""
    if isinstance(sandbox, ProcessLimit) and (on_host := sandbox.forks_refused()) is not None:
        return on_host
    try:
        out = sandbox.exec(PIDS_EVENTS, timeout=30).stdout
    except EnvError:
        return None
    match = re.search(r"^max (\d+)$", out, re.M)
    return int(match.group(1)) if match else None


def collect_count(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
                  env: dict[str, str] | None = None, runner: str = "pytest") -> tuple[int | None, str]:
    """How many tests `command` collects with `deselected` left out, without running them (by `runner`).

    Returns:
        (count, note): the count, or None with a note saying why it could not be read.
    """
    if runner not in COLLECTORS:
        return None, f"the {runner} runner cannot count tests without running them"
    return COLLECTORS[runner](sandbox, command, deselected, timeout_s, env)


__all__ = ["COLLECTING_RUNNERS", "DEFAULT_COMMANDS", "DEFAULT_PER_TEST_TIMEOUT_S", "RUNNERS", "TestRunner",
           "PIDS_EVENTS", "collect_count", "collection_errors", "collects", "count", "forks_refused", "go_test_command", "hung_tests",
           "static_test_count", "parse_go_test_json", "parse_junit", "parse_summary", "pytest_args",
           "run_tests", "selection_args", "test_command"]
