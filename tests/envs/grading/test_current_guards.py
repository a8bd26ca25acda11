"""A task stores its graded run's files when it is made; a guard fixed since (a cheat found after the task was made)
must still reach it: the runtime's reward and every export grade it with this version's guards, and keep what
describes the task (its selection, its excludes) as recorded. Fast, no Docker."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.export.bugstate import grading as export_grading
from envs.grading.image import image_tag, write_context
from envs.runtime.grade import grading_of
from envs.task import Task
from envs.grading.kit.run import RUN_DIR
from envs.testrun import confine
from envs.testrun.grading import NODE_GUARD, current_guards, grading_run, node_guard_files, with_current_guards
from envs.testrun.pytest_runner import GUARD_DOCTESTS, GUARD_HANDOFFS, GUARD_THREADS
from tests.envs.task_env import make_task

OLD_GUARD = "# the guard as it was when the task was made: it let an always-equal object through\n"


def made_with_an_old_guard() -> Task:
    task = make_task("e" * 12, "env:1")
    assert task.grading is not None
    guards = [path for path in task.grading.run.files if path in current_guards()]
    assert len(guards) == 6, task.grading.run.files  # the Python guard, its four helpers and its sitecustomize
    files = {**task.grading.run.files, **dict.fromkeys(guards, OLD_GUARD)}
    for helper in (GUARD_DOCTESTS, GUARD_HANDOFFS, GUARD_THREADS):  # a task made before they were files of their own
        del files[next(path for path in guards if path.endswith(f"/{helper}.py"))]
    run = task.grading.run.model_copy(update={"files": files})
    return task.model_copy(update={"grading": task.grading.model_copy(update={"run": run})})


def test_the_runtime_grades_an_old_task_with_this_versions_guards() -> None:
    task = made_with_an_old_guard()
    graded = grading_of(task)
    assert OLD_GUARD not in graded.run.files.values()
    python_guard = [p for p in current_guards() if p.endswith(".py")]
    assert all(p in graded.run.files for p in python_guard), graded.run.files  # whole: the doctest check added
    assert {p: graded.run.files[p] for p in current_guards() if p in graded.run.files} == {
        p: t for p, t in current_guards().items() if p in graded.run.files}
    kept = {p: t for p, t in task.grading.run.files.items() if p not in current_guards()}  # type: ignore[union-attr]
    assert kept and all(graded.run.files[p] == t for p, t in kept.items())  # the selection, the plug-ins' others
    assert graded.run.command == task.grading.run.command  # type: ignore[union-attr]


def test_an_export_writes_this_versions_guards_into_the_start_image(tmp_path: Path) -> None:
    task = made_with_an_old_guard()

    class Entry:  # what bugstate.grading reads of a TaskEntry
        def __init__(self, task: Task) -> None:
            self.task = task

    graded = export_grading(Entry(task))  # type: ignore[arg-type]
    write_context(tmp_path, "env:1", task.bug_patch, graded)
    policy = json.loads((tmp_path / "grader" / "policy.json").read_text())
    assert OLD_GUARD not in policy["files"].values()
    assert set(current_guards()) & set(policy["files"])
    # the start image is named by what it holds: an old task's image is built anew with the new guard
    assert image_tag("t", "env:1", task.bug_patch, graded) != image_tag("t", "env:1", task.bug_patch, task.grading)


def test_a_grading_with_current_guards_is_left_as_it_is() -> None:
    fresh = make_task("e" * 12, "env:1").grading
    assert fresh is not None and with_current_guards(fresh) is fresh
    go = fresh.model_copy(update={"run": grading_run("go", None, "go test ./...", [], ["T"])})  # type: ignore[arg-type]
    assert with_current_guards(go) is go


def test_a_node_run_made_before_gets_the_launcher_of_its_childrens_confinement() -> None:
    fresh = make_task("e" * 12, "env:1").grading
    assert fresh is not None
    old_node = {f"{RUN_DIR}/{NODE_GUARD}": OLD_GUARD}
    node = fresh.model_copy(update={"run": fresh.run.model_copy(update={"files": old_node, "parser": "node"})})
    files = with_current_guards(node).run.files
    assert files == node_guard_files()  # the guard of this version and its launcher; no Python guard added


@pytest.mark.parametrize(("runner", "command"), [("go", "go test -json ./..."), ("cargo", "cargo test --offline"),
                                                 ("maven", "mvn -B -o test")])
def test_a_compiled_run_made_before_its_test_binaries_were_confined_is_confined_now(runner: str, command: str) -> None:
    fresh = make_task("e" * 12, "env:1").grading
    assert fresh is not None
    now = grading_run(runner, None, command, [], ["T"])  # type: ignore[arg-type]
    assert now.command.startswith(confine.prefix(now.parser)) and confine.LAUNCHER in now.files
    old = now.model_copy(update={"command": now.command[len(confine.prefix(now.parser)):],
                                 "files": {p: t for p, t in now.files.items() if p not in confine.files()}})
    graded = with_current_guards(fresh.model_copy(update={"run": old}))
    assert graded.run == now
    stale = now.model_copy(update={"files": {**now.files, confine.LAUNCHER: OLD_GUARD}})
    assert with_current_guards(fresh.model_copy(update={"run": stale})).run == now  # its launcher as this version's


def test_a_python_or_node_run_is_not_confined_by_the_launcher() -> None:
    fresh = make_task("e" * 12, "env:1").grading
    assert fresh is not None
    assert confine.MARK not in with_current_guards(fresh).run.command
    assert confine.confined(fresh.run) is fresh.run
