"""End to end on Docker for other runners: the Node (node:test) and Maven fixtures -> verified
environments -> validated mutation tasks whose FAIL_TO_PASS are the runner's own test ids, checked again in a
fresh container."""
from __future__ import annotations

import pytest

from autoinstall.tasks.workspace import Suite
from tests.autoinstall.test_tasks_docker import check_in_fresh_container
from tests.builds import Builds

CASES = [
    pytest.param("node_package", "node", "lib/index.js", " > ", id="node"),
    pytest.param("java_maven", "maven", "src/main/java/com/example/calc/Calc.java", "com.example.calc.",
                 id="java"),
]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(("fixture", "runner", "source", "id_mark"), CASES)
def test_mutation_tasks_for_node_and_maven_fixtures(fixture: str, runner: str, source: str, id_mark: str,
                                                   builds: Builds) -> None:
    built = builds.task(fixture)  # the fixture as a one-commit repository, built, one mutation task made
    spec = built.env.spec
    assert spec.status == "verified", spec.failure
    assert spec.plan.test_runner == runner
    run = spec.verification.last_run
    assert run is not None
    runner_ids = {r.test_id for r in run.results if r.outcome == "passed"}
    report = built.report
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
