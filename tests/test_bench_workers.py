"""bench/workers.py: the rollout bench's loads driven from forked worker processes or from threads."""

from __future__ import annotations

import os
import threading
import time

import pytest

from bench.workers import drive


class FakeLoad:
    """Records which process ran it, from which first k, and one sample per 'call'."""

    def __init__(self, i: int) -> None:
        self.i, self.k, self.prepared = i, 0, 0
        self.latencies: list[float] = []
        self.by_tool: dict[str, list[float]] = {}
        self.errors: list[str] = []

    def prepare(self) -> None:
        self.k = 0
        self.prepared += 1

    def run(self, seconds: float, think_s: float, stop: threading.Event | None = None) -> None:
        first, end = self.k, time.monotonic() + seconds
        while time.monotonic() < end:
            self.latencies.append(float(self.i))
            self.by_tool.setdefault(f"pid{os.getpid()}", []).append(float(first))
            self.k += 1
            time.sleep(think_s or 0.001)


@pytest.mark.parametrize("procs", [1, 3])
def test_every_load_keeps_its_own_samples(procs: int) -> None:
    loads = [FakeLoad(i) for i in range(7)]
    started: list[bool] = []
    latencies, elapsed = drive(loads, 0.1, 0.01, procs=procs, phase="lockstep",
                               on_start=lambda: started.append(all(lo.prepared and not lo.latencies for lo in loads)))
    assert started == [True]  # once, after every load was prepared and before any call
    assert 0.1 <= elapsed < 5
    assert sorted(latencies) == sorted(ms for lo in loads for ms in lo.latencies)
    for lo in loads:
        assert lo.latencies and set(lo.latencies) == {float(lo.i)}
        (pid, firsts), = lo.by_tool.items()
        assert (pid == f"pid{os.getpid()}") == (procs == 1)  # workers are other processes
        assert firsts == [0.0] * len(firsts)  # lockstep: every load from its first tool
    pids = {pid for lo in loads for pid in lo.by_tool}
    assert len(pids) == procs
    # prepared before the run (the caller prepares again after workers ran)
    assert {lo.prepared for lo in loads} == {1}


def test_staggered_loads_start_at_their_own_tool() -> None:
    loads = [FakeLoad(i) for i in range(8)]
    drive(loads, 0.05, 0.01, procs=2, phase="staggered")
    for lo in loads:
        (firsts,) = lo.by_tool.values()
        assert set(firsts) == {float(lo.i % 4)}


def test_a_worker_error_is_reported() -> None:
    class Broken(FakeLoad):
        def run(self, seconds: float, think_s: float, stop: threading.Event | None = None) -> None:
            raise RuntimeError("boom")

    with pytest.raises(AssertionError, match="boom"):
        drive([Broken(0), Broken(1)], 0.05, 0.0, procs=2)
