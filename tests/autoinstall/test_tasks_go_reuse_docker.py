"""Go's validations on Docker reuse their containers: a run writes only Go's build cache and telemetry counters
outside the candidate's files (the runner's neutral caches), so a container given back is the next one's, and no
run reports a test result kept from an earlier one."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.options import docker_factory
from autoinstall.tasks import MakeOptions, MakeReport, TaskStore, make_tasks
from autoinstall.tasks.containers import Containers
from autoinstall.tasks.workspace import Suite
from tests.adversarial.surfaces import FIXTURES
from tests.builds import Builds


@pytest.mark.docker
@pytest.mark.slow
def test_go_validations_reuse_their_containers(builds: Builds) -> None:
    env = builds.task(FIXTURES["go"]).env  # the run's one build of the Go fixture (the cheating agents' too)
    assert env.spec.status == "verified", env.spec.failure

    def make(work: Path) -> MakeReport:
        return make_tasks(env.env_id, docker_factory(), catalog=env.catalog, store=TaskStore(work / "tasks"),
                          options=MakeOptions(max_tasks=4, kinds=("mutation",)))

    report = builds.made("go-validations-reused", make)
    assert report.validated >= 3, (report.candidates, report.searched, report.dropped)
    leases = report.containers["started"] + report.containers["reused"]
    assert leases >= report.validated and report.containers["reused"] >= 1, report.containers
    assert report.containers["unchecked"] == 0, report.containers

    suite = Suite.from_spec(env.spec)
    assert suite is not None and env.spec.image
    pool = Containers(docker_factory(), env.spec.image, suite)
    try:
        for _ in range(3):  # the same tree each time: a result cache would answer the second and third runs
            with pool.lease(["mathx/mathx.go"]) as (box, restored):
                run = suite.run(box, timeout_s=300)
                assert run.results and "(cached)" not in run.output_tail, run.output_tail
                restored()
    finally:
        pool.close()
    assert (pool.started, pool.reused) == (1, 2)
