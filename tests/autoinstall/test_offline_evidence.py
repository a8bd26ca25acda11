"""Tests that need the internet are deselected on the evidence of their own failures (issue 23), read from a
real offline run (tests/fixtures/captured/python_offline): a cause chained under a project's own exception
counts, and a suite failing for other reasons too still gets its network tests deselected."""
from __future__ import annotations

import gzip
from pathlib import Path

from autoinstall.ecosystems.base import FailedTest, RepairContext
from autoinstall.ecosystems.python import PythonEcosystem
from autoinstall.ecosystems.python.repairs import repair
from envs.spec import Diagnosis, Plan, Step
from envs.testrun.junit import parse_junit
from envs.testrun.pytest_runner import with_causes

REPORT = gzip.decompress((Path(__file__).parents[1] / "fixtures" / "captured" / "python_offline" /
                          "junit.xml.gz").read_bytes()).decode()
NEED_THE_INTERNET = ["test_offline.py::test_aiohttp_session", "test_offline.py::test_dataset_download",
                     "test_offline.py::test_httpx_client", "test_offline.py::test_public_resolver"]


def test_a_cause_chained_under_the_projects_own_exception_is_evidence() -> None:
    plain = {r.test_id: r for r in parse_junit(REPORT)}
    read = {r.test_id: r for r in with_causes(parse_junit(REPORT), REPORT)}
    dataset = "test_offline.py::test_dataset_download"
    assert plain[dataset].message.startswith("test_offline.DownloadError: could not download")
    assert not PythonEcosystem().justifies_deselection(plain[dataset].message)  # cut before the cause
    assert PythonEcosystem().justifies_deselection(read[dataset].message)
    assert "Failed to resolve 'data.example.org'" in read[dataset].message
    assert read["test_offline.py::test_arithmetic"].message == plain["test_offline.py::test_arithmetic"].message


def test_the_network_tests_are_deselected_when_the_runs_own_diagnosis_has_no_repair() -> None:
    """The whole output first shows a refusal on a port no known service has (a server the suite runs itself):
    no repair for that, and the tests that need the internet are still left out, each on its own message."""
    results = with_causes(parse_junit(REPORT), REPORT)
    failed = [FailedTest(test_id=r.test_id, message=r.message) for r in results if r.outcome == "failed"]
    ctx = RepairContext(plan=Plan(test_command="python -m pytest"), failing=Step(command="<tests>", why="tests"),
                        phase="tests", output="ConnectionRefusedError: [Errno 111] Connection refused",
                        diagnosis=Diagnosis(kind="service_unavailable", subject="network service"), python="3.11",
                        available_pythons=["3.11"], failed_tests=failed, test_ids=[r.test_id for r in results])
    found = repair(ctx)
    assert found is not None and found.kind == "deselect" and found.reason.startswith("needs_network")
    assert sorted(found.tests) == NEED_THE_INTERNET  # not the local cache server, not the failing assertion
    then = repair(ctx.model_copy(update={"tried": [found]}))  # next: the local server a test reached is run
    assert then is not None and then.step is not None and "memcached" in then.step.command
    assert repair(ctx.model_copy(update={"tried": [found, then], "failed_tests": failed[-1:]})) is None  # 1 + 1 == 3
