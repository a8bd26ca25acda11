"""Running a test command and reading its results, by runner name: the builder's verifier, the runtime's
reward and the exporters' scoring scripts all run tests this one way.

`abilities.py` is the one record of what each runner can do (`abilities(name)`, with a safe default for an
unknown name); `registry.py` holds every runner's record. Files, one per kind of runner: `pytest_runner.py`
(JUnit XML per test, `--collect-only` counts), `go_runner.py` (`go test -json` events, `go test -list`
counts), `cargo_runner.py`, `node_runner.py` (`node_only.py`: its selection by id), `maven_runner.py`, `unittest_runner.py` (unittest, testtools
and custom Python runners: their verbose lines per test, their exit status honoured, `--list` counts),
`summary.py` (summary lines, when a runner prints nothing per test), `junit.py` (the JUnit XML parser),
`timeout_plugin.py` (the per-test timeout every pytest run loads, stdlib only, never left in an image),
`pytest_output.py` (hung tests and uncollectable files read from a run), `grading.py` (how the task grader
runs each runner).
A language adds a module and one record in registry.py.
"""
from __future__ import annotations

import re

from envs.base import ProcessLimit, Sandbox
from envs.errors import EnvError
from envs.spec import Deselection, Plan, TestRun, TestRunner
from envs.testrun import registry
from envs.testrun.abilities import RunnerAbilities, abilities, is_registered, registered
from envs.testrun.go_runner import go_test_command, parse_go_test_json
from envs.testrun.junit import count, parse_junit
from envs.testrun.pytest_output import TIMEOUT_ENV, collection_errors, hung_tests, static_test_count
from envs.testrun.pytest_runner import pytest_args, selection_args
from envs.testrun.summary import parse_summary

DEFAULT_PER_TEST_TIMEOUT_S = 120.0
"""Seconds one test may run when the caller does not say (the builder's Budgets do)."""
DEFAULT_RUNNER = registry.DEFAULT_RUNNER
FALLBACK_RUNNER = registry.FALLBACK_RUNNER


def collects(runner: str) -> bool:
    """True when `runner` can collect tests without running them (its `collect` checks are meaningful)."""
    return abilities(runner).collect is not None


def test_command(plan: Plan) -> str | None:
    """The command that runs the project's tests, from the plan."""
    if plan.test_command:
        return plan.test_command
    return next((c.command for c in plan.checks if c.kind == "tests"), None)


def run_tests(sandbox: Sandbox, command: str | None, runner: str, deselected: list[Deselection],
              timeout_s: float, env: dict[str, str] | None = None, per_test_timeout_s: float | None = None) -> TestRun:
    """Run a test command once in `sandbox` and collect per-test results.

    Args:
        sandbox: a started sandbox whose workdir holds the project.
        command: the project's test command; None means there are no tests.
        runner: how to run and read it (its record; another name: its summary line).
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
    run = abilities(runner).run(sandbox, command, deselected, timeout_s, env)
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
    collect = abilities(runner).collect
    if collect is None:
        return None, f"the {runner} runner cannot count tests without running them"
    return collect(sandbox, command, deselected, timeout_s, env)


__all__ = ["DEFAULT_PER_TEST_TIMEOUT_S", "DEFAULT_RUNNER", "FALLBACK_RUNNER", "PIDS_EVENTS", "RunnerAbilities", "TestRunner", "abilities",
           "collect_count", "collection_errors", "collects", "count", "forks_refused", "go_test_command",
           "hung_tests", "is_registered", "parse_go_test_json", "parse_junit", "parse_summary", "pytest_args",
           "registered", "run_tests", "selection_args", "static_test_count", "test_command"]
