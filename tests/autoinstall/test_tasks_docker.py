"""End to end on Docker: a small fixture repository with history -> verified environment -> validated
history and mutation tasks, whose FAIL_TO_PASS / PASS_TO_PASS are checked again in a fresh container."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from autoinstall.options import BuildOptions, docker_factory
from autoinstall.pipeline import build_environment
from autoinstall.tasks import MakeOptions, TaskStore, make_tasks
from autoinstall.tasks.workspace import Suite, apply_patch, outcomes
from envs.catalog import Catalog
from envs.task import Task

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "tasks_mutable"
BUGGY_CLAMP = "    if value > high:\n        return high\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)


def repo_with_history(dest: Path) -> Path:
    """The fixture as a git repository whose last commit fixed `clamp` (the history task to mirror)."""
    shutil.copytree(FIXTURE, dest)
    source = dest / "ranges" / "__init__.py"
    fixed = source.read_text()
    source.write_text(fixed.replace(BUGGY_CLAMP, ""))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "ranges: first version")
    source.write_text(fixed)
    git(dest, "commit", "-q", "-am", "clamp: values above the range were returned unchanged")
    return dest


def check_in_fresh_container(task: Task, suite: Suite) -> None:
    with docker_factory().sandbox(task.image, network=False) as sandbox:
        assert apply_patch(sandbox, task.bug_patch)
        seen = outcomes(suite.run(sandbox, timeout_s=300))
        assert all(seen[t] in ("failed", "error") for t in task.FAIL_TO_PASS), seen
        assert all(seen[t] == "passed" for t in task.PASS_TO_PASS), seen
        assert apply_patch(sandbox, task.gold_patch)
        seen = outcomes(suite.run(sandbox, timeout_s=300))
        assert all(seen[t] == "passed" for t in [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]), seen


def test_history_and_mutation_tasks_from_a_fixture(base_image: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    repo = repo_with_history(tmp_path / "repo")
    spec = build_environment(str(repo), BuildOptions(out_dir=tmp_path / "env"))
    assert spec.status == "verified", spec.failure
    catalog = Catalog(tmp_path / "home" / "catalog")
    env_id = catalog.upsert_spec(spec, tmp_path / "env").id
    store = TaskStore(tmp_path / "home" / "tasks")
    report = make_tasks(env_id, docker_factory(), catalog=catalog, store=store,
                        options=MakeOptions(max_tasks=2, max_history=1))
    kinds = sorted(t.kind for t in report.tasks)
    assert kinds == ["history", "mutation"], report.dropped
    assert store.read(env_id) == sorted(report.tasks, key=lambda t: t.instance_id)
    funnel = report.history
    assert (funnel.looked_at, funnel.code, funnel.candidates, funnel.validated) == (2, 1, 1, 1), funnel
    assert funnel.searched == funnel.failing == 1
    history = next(t for t in report.tasks if t.kind == "history")
    assert history.FAIL_TO_PASS == ["tests/test_ranges.py::test_clamp_high"]
    assert "values above the range" in history.problem_statement
    assert BUGGY_CLAMP.strip().splitlines()[0] not in history.problem_statement
    suite = Suite.from_spec(spec)
    assert suite is not None
    for task in report.tasks:
        assert task.validation.valid and task.validation.runs == 2
        assert task.repo == "repo" and task.base_commit == spec.source.commit
        assert set(task.FAIL_TO_PASS).isdisjoint(task.PASS_TO_PASS)
        check_in_fresh_container(task, suite)
