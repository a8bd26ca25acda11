"""Tests the builder leaves out on its own evidence, each with its reason, all counted against the cap:
tests that hang (the per-test timeout stopped them), a test the test process crashed in (SIGSEGV...: it wrote
no report, the per-test plugin named the test), and the few test files that cannot be collected once every
repair was tried. The install loop applies them; verification leaves out a test a run crashed in too, and
counts them all (checks.with_uncollected)."""
from __future__ import annotations

from pathlib import Path

from envs.base import Sandbox
from envs.spec import Deselection, TestRun
from envs.testrun import abilities, hung_tests, static_test_count

MAX_UNCOLLECTABLE_FILES = 5
"""More test files than this failing to collect is not "a few": the build fails as collection_failed."""


def hang_deselections(run: TestRun, already: list[Deselection]) -> list[Deselection]:
    """The tests the per-test timeout stopped in `run` that are not left out yet, reason `hangs: ...`."""
    left_out = {d.test for d in already}
    return [Deselection(test=test, reason=f"hangs: {why}") for test, why in hung_tests(run).items()
            if test not in left_out]


def crash_deselections(run: TestRun, already: list[Deselection], signal_name: str | None) -> list[Deselection]:
    """The test `run`'s process died in on the crash signal `signal_name` (None: it did not crash), when the
    runner named it and it is not left out yet, reason `crashes: ...`."""
    test = run.crashed_test
    if not signal_name or not test or test in {d.test for d in already}:
        return []
    return [Deselection(test=test, reason=f"crashes: the test process died with {signal_name} (exit "
                                          f"{run.exit_code}) while this test ran, before it wrote a report")]


def uncollectable_deselections(sandbox: Sandbox, runner: str, command: str, already: list[Deselection], repo: Path,
                               timeout_s: float, env: dict[str, str] | None) -> tuple[list[Deselection], str]:
    """The test files the runner cannot collect, when they are a few and the rest of the suite collects (a runner
    that names no such file: none).

    Returns (deselections, why none): each deselection's reason is `collection_error: <first line>` and its
    `uncollected` the file's tests by a static count (read from the checkout), so they count against the cap.
    """
    find = abilities(runner).uncollectable
    if find is None:
        return [], f"the {runner} runner names no test file that fails to collect"
    collected, errors = find(sandbox, command, already, timeout_s, env)
    if not errors:
        return [], f"{runner} names no test file that fails to collect"
    total = len(errors) + sum(1 for d in already if d.uncollected)
    if total > MAX_UNCOLLECTABLE_FILES:
        return [], (f"{total} test files fail to collect, more than the {MAX_UNCOLLECTABLE_FILES} "
                    "that may be left out")
    if not collected:
        return [], "nothing else in the suite collects either"
    return [Deselection(test=path, reason=f"collection_error: {why}", uncollected=_count(repo, path))
            for path, why in errors.items()], ""


def _count(repo: Path, path: str) -> int:
    """The file's tests by a static count; 1 when the checkout does not have it where pytest says."""
    file = repo / path
    try:
        return static_test_count(file.read_text(errors="replace")) if file.is_file() else 1
    except OSError:
        return 1
