"""End to end on Docker for other runners: the Node (node:test) and Maven fixtures -> verified
environments -> validated mutation tasks whose FAIL_TO_PASS are the runner's own test ids, checked again in a
fresh container."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autoinstall.options import BuildOptions, docker_factory
from autoinstall.pipeline import build_environment
from autoinstall.tasks import MakeOptions, TaskStore, make_tasks
from autoinstall.tasks.workspace import Suite
from envs.catalog import Catalog
from tests.autoinstall.test_tasks_docker import check_in_fresh_container, git

REPOS = Path(__file__).parents[1] / "fixtures" / "repos"
CASES = [
    pytest.param("node_package", "node", "lib/index.js", " > ", id="node"),
    pytest.param("java_maven", "maven", "src/main/java/com/example/calc/Calc.java", "com.example.calc.",
                 id="java"),
]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(("fixture", "runner", "source", "id_mark"), CASES)
def test_mutation_tasks_for_node_and_maven_fixtures(fixture: str, runner: str, source: str, id_mark: str,
                                                   docker_engine: None, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path.home() / ".autoinstall" if runner == "maven" else tmp_path / "home"  # Maven: the warm cache
    monkeypatch.setenv("AUTOINSTALL_HOME", str(home))
    repo = tmp_path / "repo"
    shutil.copytree(REPOS / fixture, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first version")
    spec = build_environment(str(repo), BuildOptions(out_dir=tmp_path / "env"))
    assert spec.status == "verified", spec.failure
    assert spec.plan.test_runner == runner
    run = spec.verification.last_run
    assert run is not None
    runner_ids = {r.test_id for r in run.results if r.outcome == "passed"}
    catalog = Catalog(tmp_path / "catalog")
    env_id = catalog.upsert_spec(spec, tmp_path / "env").id
    report = make_tasks(env_id, docker_factory(), catalog=catalog, store=TaskStore(tmp_path / "tasks"),
                        options=MakeOptions(max_tasks=1, kinds=("mutation",)))
    assert report.validated >= 1, (report.candidates, report.searched, report.dropped)
    assert report.baseline_tests == len(runner_ids)
    suite = Suite.from_spec(spec)
    assert suite is not None
    for task in report.tasks:
        assert task.kind == "mutation" and task.test_runner == runner and task.mutation is not None
        assert task.mutation.file == source and task.validation.valid
        assert task.FAIL_TO_PASS and set(task.FAIL_TO_PASS) <= runner_ids, task.FAIL_TO_PASS
        assert all(id_mark in t for t in task.FAIL_TO_PASS), task.FAIL_TO_PASS
        assert sorted([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]) == sorted(runner_ids)
        check_in_fresh_container(task, suite)
