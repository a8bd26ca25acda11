"""Subtests named from values that change in every process (a pointer's address, the clock) get another id in
each run: counted through the parent test that passed in every run, never as tests missing from a run (issue
23: stretchr/testify's assert package, whose ids below are from its two verification runs)."""
from __future__ import annotations

from autoinstall.verify.checks import combine, judge
from autoinstall.verify.renamed import renamed_subtests
from envs.spec import TestResult, TestRun
from envs.testrun.junit import count

PKG = "github.com/stretchr/testify/assert"
FIRST = f"{PKG}::TestErrorIs/ErrorIs(&fmt.wrapError{{msg:\"abc:_def\",_err:(*errors.errorString)(0xc000025150)}})"
SECOND = f"{PKG}::TestErrorIs/ErrorIs(&fmt.wrapError{{msg:\"abc:_def\",_err:(*errors.errorString)(0xc00009c530)}})"


def _run(*outcomes: tuple[str, str]) -> TestRun:
    results = [TestResult(test_id=t, outcome=o) for t, o in outcomes]  # type: ignore[arg-type]
    return TestRun(exit_code=0, results=results, counts=count(results))


def test_a_subtest_renamed_between_runs_counts_through_its_parent_that_passed_in_both() -> None:
    first = _run((f"{PKG}::TestErrorIs", "passed"), (FIRST, "passed"), (f"{PKG}::TestLen", "passed"))
    second = _run((f"{PKG}::TestErrorIs", "passed"), (SECOND, "passed"), (f"{PKG}::TestLen", "passed"))
    assert renamed_subtests([first, second]) == {FIRST, SECOND}
    assert combine([first, second]) == {"passed": 2, "failed": 0, "error": 0, "skipped": 0, "flaky": 0}
    ok, reason = judge([], [first, second], 0.9)
    assert ok and "2 subtest(s) named differently in each run" in reason and "TestErrorIs/ErrorIs(" in reason


def test_a_missing_test_stays_an_error_unless_its_parent_passed_in_every_run_and_it_never_failed() -> None:
    parent_failed = [_run((f"{PKG}::TestA", "passed"), (f"{PKG}::TestA/x1", "passed")),
                     _run((f"{PKG}::TestA", "failed"), (f"{PKG}::TestA/x2", "failed"))]
    assert renamed_subtests(parent_failed) == set()
    assert combine(parent_failed)["error"] == 2 and combine(parent_failed)["flaky"] == 1
    top_level = [_run((f"{PKG}::TestA", "passed"), (f"{PKG}::TestB", "passed")), _run((f"{PKG}::TestA", "passed"))]
    assert renamed_subtests(top_level) == set() and combine(top_level)["error"] == 1  # no parent vouches for it
    parent_missing = [_run((f"{PKG}::TestC", "passed"), (f"{PKG}::TestC/a", "passed")), _run((f"{PKG}::TestC/b", "passed"))]
    assert renamed_subtests(parent_missing) == set()
    pytest_ids = [_run(("tests/a.py::test_x", "passed"), ("tests/a.py::test_y", "passed")),
                  _run(("tests/a.py::test_x", "passed"))]
    assert combine(pytest_ids)["error"] == 1  # a path's "/" is no parent test
    assert renamed_subtests([top_level[0]]) == set()  # one run: nothing to compare
