"""What a test runner can do, as one record per runner, and the one lookup every stage asks.

The builder's stages, the tasks, the runtime and the exports never name a runner: they ask
`abilities(plan.test_runner)` a question (can it count a suite without running it? can it run only given ids?
does its first run compile for minutes?). The records themselves are in registry.py; an unknown name gets
`summary_only(name)`: its summary line read, nothing else assumed.
"""
from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from envs.base import Sandbox
from envs.grading.policy import GradingRun
from envs.spec import Deselection, TestRun
from envs.testrun import summary

Run = Callable[[Sandbox, str, list[Deselection], float, "dict[str, str] | None"], TestRun]
"""(sandbox, command, deselected, timeout_s, env) -> one run's results."""
Collect = Callable[[Sandbox, str, list[Deselection], float, "dict[str, str] | None"], "tuple[int | None, str]"]
"""(sandbox, command, deselected, timeout_s, env) -> (how many tests it collects, or None; a note why not)."""
FindUncollectable = Callable[[Sandbox, str, list[Deselection], float, "dict[str, str] | None"],
                             "tuple[int | None, dict[str, str]]"]
"""(sandbox, command, deselected, timeout_s, env) -> (tests collected, {test file that fails to collect: why})."""
GradingCommand = Callable[[Sandbox, str, list[Deselection], list[str], float], GradingRun]
"""(sandbox, command, deselected, selected ids, per-test seconds) -> how the grader runs the task's tests."""
ReportFormat = Literal["junit", "gotest", "libtest", "surefire", "node", "unittest", "summary", "none"]
"""What the runner's results are read from (the grader kit's parser of the same name, where there is one)."""
PerTestIds = Literal["always", "when printed", "never"]


def _no_settings(command: str) -> list[str]:
    return []


def _no_files(ids: list[str]) -> set[str]:
    return set()


def _no_file(path: str) -> bool:
    return False


class IdSelection(BaseModel):
    """How a runner runs only given test ids: a plug-in put in a folder, and the command wrapped to load it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    files: dict[str, str]
    """File name -> text, written into the plug-in folder before the run."""
    wrap: Callable[[str, str, str], str]
    """(command, the file listing the ids one a line, the plug-in folder) -> the command running only those."""
    exact: bool = True
    """Every id it is given runs (with more, perhaps); False: it matches names as the runner's output printed
    them and the parse read them, which a name may not survive, so an id must be seen to select itself (the
    tasks keep only the baseline ids a selecting run reports)."""

    def command(self, command: str, select_file: str, folder: str) -> str:
        return self.wrap(command, select_file, folder)

    def put(self, sandbox: Sandbox, folder: str) -> None:
        """Write the plug-in's files into `folder` of the sandbox."""
        for name, text in self.files.items():
            sandbox.write_file(f"{folder}/{name}", text.encode())

    def selecting(self, sandbox: Sandbox, command: str, ids: list[str], folder: str) -> str:
        """`command` running only `ids`: their list written into `folder` (the plug-in must be there: `put`)."""
        select_file = f"{folder}/select-{uuid.uuid4().hex[:8]}.txt"
        sandbox.write_file(select_file, "\n".join(ids).encode())
        return self.wrap(command, select_file, folder)


class RunnerAbilities(BaseModel):
    """What one test runner can do: THE record the builder, the tasks, the runtime and the exports read."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    has_tests: bool = True
    """False for a plan with nothing to run: no test command, no reward, no tasks."""
    run: Run = summary.run
    """Runs a test command once and reads its results."""
    collect: Collect | None = None
    """Counts a suite without running it (a `collect` check and the suite's size mean something), else None."""
    per_test_ids: PerTestIds = "never"
    """Whether its results name each test: always (a run without any ran none), when its output prints them,
    never (counts only)."""
    select: IdSelection | None = None
    """Runs only given ids; None: it runs its whole suite and a selection is scored from its per-test results."""
    report: ReportFormat = "summary"
    per_test_timeout: bool = False
    """A test that hangs is stopped alone and named (the rest of the run goes on)."""
    listing_is_lower_bound: bool = False
    """Its listing counts the units its results count but misses some (cases expanded at run time): the suite's
    size is raised to what ran."""
    warm_up: bool = False
    """Its first run compiles for minutes: a container that runs it again should start from one that ran it."""
    coverage_map: bool = False
    """A traced run can map each test to the functions it calls (the tasks' per-test selection of candidates)."""
    stop_after: Callable[[str, int], str] | None = None
    """(command, n) -> the command stopping after n failures, else None."""
    default_command: str | None = None
    """The runner with nothing but the project's configuration: what "the default collection" means."""
    settings_of: Callable[[str], list[str]] = _no_settings
    """The options of a command that set how it runs, not which tests (kept when the default collection
    replaces a side suite)."""
    deselect_in_check: Callable[[str, list[Deselection]], str] | None = None
    """(a collect check's command, deselected) -> the check leaving out what the test run leaves out."""
    uncollectable: FindUncollectable | None = None
    """Names the test files that fail to collect (a few of them may be left out), else None."""
    junit_report: Callable[[list[Deselection], str], str] | None = None
    """(deselected, path) -> arguments that make its run write a JUnit report at path with the deselections
    left out: what the exports' scorer reads; None: it cannot."""
    grading: GradingCommand | None = None
    """How the task grader runs its tests by id (envs/testrun/grading.py); None: its tests cannot be graded."""
    test_files: Callable[[list[str]], set[str]] = _no_files
    """The files its test ids name, where an id names one."""
    neutral_caches: Callable[[str], str] | None = None
    """(test command) -> a shell command printing, one a line, the absolute folders where its runs keep caches
    whose content cannot change what a later run computes, by the tool's own design (found by a hash of every
    input's content; no test result kept); "" or None: none. Validation containers leave them out of their
    exactness check (autoinstall/tasks/containers.py), so a validation that only wrote there leaves its
    container to the next one."""
    content_keyed: Callable[[str], bool] = _no_file
    """Whether those caches find their entries by this file's content (a file of the checkout a validation
    changed): after a change they cannot see, a container is never given to the next validation."""
    reset_caches: Callable[[str], str] | None = None
    """(test command) -> a shell command printing, one a line, the absolute folders (the workspace's too) where
    its runs keep what a later run reads and could report differently by (a results cache ordering the next
    run's files); "" or None: none. A validation container that is reused has them put back as they were when it
    started, before it is looked at (autoinstall/tasks/containers.py): every validation sees the image's."""
    crash: str = ""
    """A regular expression its output matches when a test process ended before reporting every test (a Go
    panic, a signal, the interpreter's fatal error); empty: never told apart."""

    def ended_early(self, run: TestRun) -> bool:
        """Whether `run` shows a test process that ended before reporting all its tests: those it never
        reported did not run, and say nothing of the change (a failing test ended the process)."""
        if not self.crash:
            return False
        pattern = re.compile(self.crash, re.MULTILINE)
        texts = [run.output or run.output_tail, *(r.message for r in run.results if r.outcome in ("failed", "error"))]
        return any(pattern.search(text) for text in texts if text)


_REGISTERED: dict[str, RunnerAbilities] = {}


def register(record: RunnerAbilities) -> None:
    """Add (or replace) a runner's record; registry.py registers every runner envs/testrun knows."""
    _REGISTERED[record.name] = record


def summary_only(name: str) -> RunnerAbilities:
    """The safe default for a runner nothing is known of: run as it is, counts from its summary line."""
    return RunnerAbilities(name=name)


def abilities(runner: str) -> RunnerAbilities:
    """The record of `runner`; an unknown name gets summary_only(runner)."""
    return _REGISTERED.get(runner) or summary_only(runner)


def registered() -> tuple[str, ...]:
    """Every runner with a record, in registration order."""
    return tuple(_REGISTERED)


def is_registered(runner: str) -> bool:
    return runner in _REGISTERED
