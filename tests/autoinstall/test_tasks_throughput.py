"""Throughput of task making without Docker: validations a worker has not started run on the search's thread."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.searching import Pending
from autoinstall.tasks.validate import Verdict
from envs.task import TaskValidation


def pending(job):  # type: ignore[no-untyped-def]
    return Pending(Candidate(kind="mutation", bug_patch="", gold_patch=""), Verdict(kept=True), None, job, None)  # type: ignore[arg-type]


def test_a_queued_validation_runs_on_the_stealing_thread_and_a_started_one_is_left_to_its_worker() -> None:
    release, started = threading.Event(), threading.Event()
    ran_on: list[str] = []

    def busy() -> tuple[TaskValidation, None]:
        started.set()
        release.wait(10)
        ran_on.append(threading.current_thread().name)
        return TaskValidation(runs=1), None

    def queued() -> tuple[TaskValidation, None]:
        ran_on.append(threading.current_thread().name)
        return TaskValidation(runs=2), None

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="validate") as executor:
        first, second = pending(busy), pending(queued)
        first.future, second.future = executor.submit(busy), executor.submit(queued)
        assert started.wait(10)
        assert not first.steal()  # its worker runs it
        assert second.steal() and second.future.result()[0].runs == 2
        assert ran_on == [threading.current_thread().name]
        release.set()
        assert first.future.result()[0].runs == 1
    assert ran_on[1].startswith("validate")


def test_a_stolen_validation_that_raises_raises_from_its_result() -> None:
    def boom() -> tuple[TaskValidation, None]:
        raise RuntimeError("engine gone")

    with ThreadPoolExecutor(max_workers=1) as executor:
        gate = threading.Event()
        executor.submit(gate.wait, 10)
        item = pending(boom)
        item.future = executor.submit(boom)
        assert item.steal()
        gate.set()
    with pytest.raises(RuntimeError, match="engine gone"):
        item.future.result()
