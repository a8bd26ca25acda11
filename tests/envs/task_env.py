"""A small environment with one task, made by hand, for the task export and runtime tests.

The solved state is a two-function project whose tests pass; the task's bug flips `a - b` to `a + b` in sub(),
so tests/test_calc.py::test_sub fails (FAIL_TO_PASS) and test_add keeps passing (PASS_TO_PASS).
"""
from __future__ import annotations

import difflib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoinstall.ecosystems.python.grading import RULES as PYTHON_RULES
from envs.catalog import Catalog
from envs.grading.policy import Grading, GradingRules
from envs.spec import Deselection, EnvSpec, Plan, SourceRecord, TestResult, TestRun, Verification
from envs.task import Task, TaskValidation
from envs.testrun.grading import grading_run
from tests.envs.conftest import make_sandbox

SOLVED = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
BUGGY = SOLVED.replace("a - b", "a + b")
PROJECT = {
    "calc.py": SOLVED,
    "tests/test_calc.py": ("from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                           "def test_sub():\n    assert sub(5, 3) == 2\n"),
}
F2P = ["tests/test_calc.py::test_sub"]
P2P = ["tests/test_calc.py::test_add"]
REPO_URL = "https://github.com/example-org/calc.git"
DESELECTED = [Deselection(test="tests/test_gone.py", reason="needs a service")]
STATEMENT = "sub() adds instead of subtracting\n\n`calc.sub(5, 3)` returns 8; it should return 2."


def diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def make_spec(image: str) -> EnvSpec:
    results = [TestResult(test_id=t, outcome="passed") for t in [*P2P, *F2P]]
    run = TestRun(exit_code=0, duration_s=1.0, results=results, counts={"passed": 2})
    plan = Plan(test_command="python -m pytest tests")
    return EnvSpec(status="verified", source=SourceRecord(repo=REPO_URL, name="calc", commit="ab" * 20),
                   model="embedded", base_image="base", python="3.11", image=image, plan=plan,
                   test_command=plan.test_command,
                   deselected=DESELECTED,
                   verification=Verification(verified=True, runs=[run, run]), created_at="2024-05-06T00:00:00+00:00")


def make_grading() -> Grading:
    """The task's grading, as `autoinstall tasks make` would record it (Python's rules, pytest's run)."""
    run = grading_run("pytest", None, "python -m pytest tests", DESELECTED, F2P + P2P)  # type: ignore[arg-type]
    return Grading(rules=PYTHON_RULES.merged(GradingRules(protected=["tests/test_calc.py"])), run=run,
                   selected=F2P + P2P)


def make_task(env_id: str, image: str) -> Task:
    return Task(instance_id="example-org__calc-mutation-0001", env_id=env_id, repo="example-org/calc",
                base_commit="ab" * 20, image=image, kind="mutation", bug_patch=diff("calc.py", SOLVED, BUGGY),
                gold_patch=diff("calc.py", BUGGY, SOLVED), problem_statement=STATEMENT, FAIL_TO_PASS=F2P,
                PASS_TO_PASS=P2P, test_command="python -m pytest tests", fix_files=1, fix_lines=1,
                validation=TaskValidation(runs=2, bug_fail_to_pass_failed=True, bug_pass_to_pass_passed=True,
                                          gold_all_passed=True), grading=make_grading(),
                created_at="2024-05-07T00:00:00+00:00")


def store(home: Path, catalog: Catalog, image: str, env_dir: Path) -> tuple[str, Task]:
    """Catalog the environment and write its one task to home/tasks/<id>.jsonl."""
    env_dir.mkdir(parents=True, exist_ok=True)
    env_id = catalog.upsert_spec(make_spec(image), env_dir).id
    task = make_task(env_id, image)
    (home / "tasks").mkdir(parents=True, exist_ok=True)
    (home / "tasks" / f"{env_id}.jsonl").write_text(task.model_dump_json() + "\n")
    return env_id, task


def build_image(request: pytest.FixtureRequest, name: str) -> Iterator[str]:
    """The base image plus PROJECT (solved) and pytest, snapshotted; removed afterwards."""
    from envs.docker import remove_image
    from envs.home import cache_dir

    with make_sandbox(request, "docker", network=True, cache_dir=cache_dir()) as sb:
        for path, text in PROJECT.items():
            sb.write_file(path, text.encode())
        r = sb.exec("uv pip install --python /opt/venv/bin/python3 pytest", timeout=300)
        assert r.ok, r.output
        tag = sb.snapshot(name)
    try:
        yield tag
    finally:
        remove_image(tag)


def tool_python(name: str, what: str) -> str:
    """The python of a cached tool venv (~/.cache/autoinstall/tools/<name>, made by scripts/setup.sh), or
    skip (fail when CI is set)."""
    python = Path(os.environ.get(f"AUTOINSTALL_{name.upper()}_PYTHON") or
                  Path.home() / ".cache" / "autoinstall" / "tools" / name / "bin" / "python")
    if not python.is_file():
        reason = f"{what} is not installed at {python} (scripts/setup.sh installs it)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {reason}", pytrace=False)
        pytest.skip(reason)
    return str(python)
