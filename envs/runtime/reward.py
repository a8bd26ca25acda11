"""The reward: the verification tests run in the container (a selection through the runner's selection plug-in
where it has one; other runners run their whole suite and the selection is scored from their per-test results),
scored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from envs.base import Sandbox
from envs.runtime.spec import RuntimeSpec
from envs.spec import TestResult
from envs.testrun import abilities, run_tests

PLUGIN_DIR = "/var/tmp/autoinstall-reward"
"""Where a runner's selection plug-in is put in the container to run only a selection (its `select` record)."""


def selects(entry: str, test_id: str) -> bool:
    """True when the selection entry names `test_id`: exactly, or as its file, directory, class or
    unparametrized name (the same rule the in-container plugin applies); a dotted unittest id also by its
    module, class or unscenarioed name (`pkg.mod.Class` names `pkg.mod.Class.test_x`)."""
    entry = entry.strip().removeprefix("./")
    if test_id == entry or test_id.startswith((entry + "::", entry + "/", entry + "[")):
        return True
    return "::" not in test_id and "/" not in test_id and test_id.startswith((entry + ".", entry + "("))


class TestOutcome(BaseModel):
    __test__ = False
    test_id: str
    outcome: Literal["passed", "failed", "error", "skipped", "not_run"]
    """not_run: selected but absent from the results (it counts as failed)."""
    message: str = ""


class Reward(BaseModel):
    """The score of one reward() call."""

    value: float
    """passed / selected (selection) or passed / ran (all tests; skipped ones are left out)."""
    passed: int
    total: int
    """The denominator of value."""
    tests: list[TestOutcome] = Field(default_factory=list)
    exit_code: int
    duration_s: float
    collection_ok: bool = True
    output_tail: str = ""
    problems: list[str] = Field(default_factory=list)
    """A task's grade: why the run's results were not trusted (each one makes the value 0)."""
    dropped: list[str] = Field(default_factory=list)
    """A task's grade: the parts of the agent's change left out, each with why (they belong to the task)."""
    grade_s: float = 0.0
    """A task's grade: seconds for the whole grading (copying the workdir, the fresh container, the tests)."""
    carried_bytes: int = 0
    notes: list[str] = Field(default_factory=list)


def score(results: list[TestResult], selection: list[str]) -> tuple[int, int, list[TestOutcome]]:
    """(passed, total, per-test outcomes) over `selection` (entries as in `selects`), or over all
    tests that ran when it is empty."""
    if not selection:
        tests = [TestOutcome(test_id=r.test_id, outcome=r.outcome, message=r.message) for r in results]
        return (
            sum(t.outcome == "passed" for t in tests),
            sum(t.outcome in ("passed", "failed", "error") for t in tests),
            tests,
        )
    chosen: dict[str, TestOutcome] = {}
    for entry in selection:
        matched = [r for r in results if selects(entry, r.test_id)]
        for r in matched:
            chosen.setdefault(r.test_id, TestOutcome(test_id=r.test_id, outcome=r.outcome, message=r.message))
        if not matched:
            chosen.setdefault(
                entry, TestOutcome(test_id=entry, outcome="not_run", message="selected but not run")
            )
    tests = list(chosen.values())
    return sum(t.outcome == "passed" for t in tests), len(tests), tests


def run_reward(sandbox: Sandbox, spec: RuntimeSpec, selection: list[str], timeout_s: float | None,
               install_plugin: Callable[[], None]) -> Reward:
    """Environment.reward() on `sandbox`: `install_plugin()` is called before a selection is run."""
    runner = abilities(spec.test_runner)
    if not spec.test_command or not runner.has_tests:
        raise ValueError("this environment has no test command, so it has no reward")
    command, env = spec.test_command, dict(spec.env)
    if selection and runner.select is not None:
        install_plugin()
        command = runner.select.selecting(sandbox, command, selection, PLUGIN_DIR)
    run = run_tests(sandbox, command, spec.test_runner, spec.deselected,
                    timeout_s or spec.test_timeout_s, env or None)
    if run.results or runner.per_test_ids == "always":
        passed, total, outcomes = score(run.results, selection)
    elif selection:
        raise ValueError(f"a test selection needs per-test results, and this {spec.test_runner} command named "
                         f"no test in its output (exit {run.exit_code}); reward it without a selection (tests=[])")
    else:
        passed, total, outcomes = run.passed, run.ran, []
    return Reward(
        value=passed / total if total else 0.0,
        passed=passed,
        total=total,
        tests=outcomes,
        exit_code=run.exit_code,
        duration_s=run.duration_s,
        collection_ok=run.collection_ok,
        output_tail=run.output_tail,
    )


def write_plugin(sandbox: Sandbox, runner: str) -> None:
    """Put the runner's selection plug-in in the container (once per episode: the caller keeps track)."""
    select = abilities(runner).select
    if select is not None:
        select.put(sandbox, PLUGIN_DIR)
