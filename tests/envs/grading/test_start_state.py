"""A grading tree that holds nothing of the agent's is the task's start state (envs/grading/kit/grade.py): the
grader scores it as the task's validation ran it (FAIL_TO_PASS failed, every other selected test passed) and runs
no test, however much else the agent changed. Only the kit's own `grade` on real folders; the run itself is
replaced by a sentinel, so each case shows whether the grader went on to run the tests.
The same on the runtime, in Docker: tests/envs/test_start_state_reward.py."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autoinstall.ecosystems.python.grading import RULES as PYTHON
from envs.grading.kit import grade, run
from envs.grading.policy import Grading, GradingRules, GradingRun
from tests.envs.grading.test_changes import START, tree

FAILING, PASSING = "tests/test_calc.py::test_sub", "tests/test_calc.py::test_add"


class WentOn(Exception):
    """Raised where the grader starts making the tree its tests run in."""


def graded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit, *, fail_at_start: list[str],
           selected: tuple[str, ...] = (FAILING, PASSING)) -> dict:
    start = tree(tmp_path / "start", START)
    agent = tree(tmp_path / "agent", START)
    edit(agent)
    work = shutil.copytree(start, tmp_path / "work", symlinks=True)
    grading = Grading(rules=PYTHON.merged(GradingRules(protected=["tests/test_calc.py"])),
                      run=GradingRun(command="exit 1", parser="junit"), selected=list(selected),
                      fail_at_start=fail_at_start)
    policy = {**grading.policy(), "start": str(start), "workdir": str(work)}
    monkeypatch.setattr(run, "lookup_user", lambda name: run.User(name, 4321, 4321))

    def went_on(*args: object) -> None:
        raise WentOn

    monkeypatch.setattr(grade.mend, "own", went_on)
    out = tmp_path / "out"
    out.mkdir()
    return grade.grade(policy, str(agent), False, False, str(out), [])


def nothing(agent: Path) -> None:
    pass


def only_the_tests(agent: Path) -> None:
    (agent / "tests/test_calc.py").write_text("def test_sub():\n    pass\n\ndef test_add():\n    pass\n")


def the_fix(agent: Path) -> None:
    (agent / "calc/core.py").write_text("def sub(a, b):\n    return a - b\n")


@pytest.mark.parametrize("edit", [nothing, only_the_tests], ids=["no change", "a change the grader drops"])
def test_nothing_taken_is_the_start_state_graded_without_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               edit) -> None:
    result = graded(tmp_path, monkeypatch, edit, fail_at_start=[FAILING])
    assert result["reward"] == 0.0
    assert result["tests"] == {FAILING: "failed", PASSING: "passed"}
    assert result["test_seconds"] == 0.0 and "start state" in result["start_state"]
    assert [d["path"] for d in result["dropped"]] == (["tests/test_calc.py"] if edit is only_the_tests else [])
    assert "start state" in (tmp_path / "out" / "test-output.txt").read_text()


@pytest.mark.parametrize(("edit", "fail_at_start", "selected"), [
    pytest.param(the_fix, [FAILING], (FAILING, PASSING),  # something taken: the tests decide
                 marks=pytest.mark.skipif(os.geteuid() != 0, reason="the taken file is given the test user")),
    (nothing, [], (FAILING, PASSING)),                   # a task made before the record: its tests run
    (nothing, [FAILING], (PASSING,)),                    # a selection without a failing test: its tests run
], ids=["a change taken", "no record of the start", "no failing test selected"])
def test_the_tests_run_otherwise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit, fail_at_start: list[str],
                                 selected: tuple[str, ...]) -> None:
    with pytest.raises(WentOn):
        graded(tmp_path, monkeypatch, edit, fail_at_start=fail_at_start, selected=selected)
