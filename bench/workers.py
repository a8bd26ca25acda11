"""Driving bench/rollout.py's loads from worker processes, as a trainer's rollout workers do, or (procs=1) from
threads of the bench's own process, all of them on one GIL (the bench's first way, kept for comparison).

The environments are started by the bench's process. Each worker is forked from it afterwards, so it inherits
every Environment (its direct-channel socket included); it drives only its share (environments i, i+N, i+2N...)
from one thread each, times every call itself, and sends its latencies back over a pipe. The bench's process
makes no call meanwhile. A worker ends through multiprocessing's os._exit: no finalizer of an inherited
Environment runs in it (a shutdown of a socket there would end the session for the parent too). Loads come back
`prepare()`d before they run; after a run in workers, prepare them again before their next calls from this
process (the workers moved their scratch files on, unknown to the parent's copies of the loads).

`phase`: "lockstep" starts every load at once at the same tool, so each round of calls is 64 calls of one tool
(a burst of 64 `ls | head -5` every ~100 ms in the paced load); "staggered" starts load i at tool i % 4 and
after i/n of one think pause. Either way every load makes the same calls in the same order and pauses as long.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

PHASES = ("staggered", "lockstep")


class Load(Protocol):
    k: int
    latencies: list[float]
    by_tool: dict[str, list[float]]
    errors: list[str]

    def prepare(self) -> None: ...

    def run(self, seconds: float, think_s: float, stop: threading.Event | None = None) -> None: ...


def drive(loads: list[Load], seconds: float, think_s: float, procs: int = 1, phase: str = "lockstep",
          on_start: Callable[[], object] | None = None) -> tuple[list[float], float]:
    """Run every load for `seconds`, one thread each, in `procs` processes; (latencies in ms, elapsed s from the
    first call's start to the last one's end). The loads' latencies and by_tool hold their own samples after.
    `on_start` is called once the loads are prepared, just before the first call."""
    for load in loads:
        load.prepare()  # every load from its first call on, its scratch file as that call expects
        load.latencies, load.by_tool, load.errors = [], {}, []
    if on_start is not None:
        on_start()
    if procs <= 1:
        results = [_run_share(loads, list(range(len(loads))), seconds, think_s, phase)]
    else:
        results = _forked(loads, procs, seconds, think_s, phase)
    for res in results:
        for i, lat, by_tool, errors in res["loads"]:
            loads[i].latencies, loads[i].by_tool, loads[i].errors = lat, by_tool, errors
    elapsed = max(r["end"] for r in results) - min(r["start"] for r in results)
    errors = [e for lo in loads for e in lo.errors]
    assert not errors, errors[:3]
    return [ms for lo in loads for ms in lo.latencies], elapsed


def _run_share(loads: list[Load], mine: list[int], seconds: float, think_s: float, phase: str) -> dict[str, Any]:
    n = len(loads)

    def run(i: int) -> None:
        if phase == "staggered":
            loads[i].k += i % 4
            time.sleep(think_s * i / n)
        try:
            loads[i].run(seconds, think_s)
        except Exception as e:  # counted as the load's error, not lost in its thread
            loads[i].errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(i,)) for i in mine]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    end = time.monotonic()
    return {"start": start, "end": end,
            "loads": [(i, loads[i].latencies, loads[i].by_tool, loads[i].errors) for i in mine]}


def _forked(loads: list[Load], procs: int, seconds: float, think_s: float, phase: str) -> list[dict[str, Any]]:
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    pipes, workers = [], []
    for p in range(procs):
        mine = list(range(p, len(loads), procs))
        if not mine:
            break
        recv, send = ctx.Pipe(duplex=False)
        worker = ctx.Process(target=_worker, args=(loads, mine, seconds, think_s, phase, go, send), daemon=True)
        worker.start()
        send.close()
        pipes.append(recv)
        workers.append(worker)
    go.set()
    results = []
    try:
        for recv in pipes:
            results.append(recv.recv())
    finally:
        for worker in workers:
            worker.join(30)
            if worker.is_alive():
                worker.kill()
    failed = [r["error"] for r in results if "error" in r]
    assert not failed, failed
    return results


def _worker(loads: list[Load], mine: list[int], seconds: float, think_s: float, phase: str,
            go: Any, send: Any) -> None:
    go.wait()
    try:
        send.send(_run_share(loads, mine, seconds, think_s, phase))
    except Exception as e:  # report it to the parent rather than leaving it waiting
        send.send({"error": f"{type(e).__name__}: {e}", "start": 0.0, "end": 0.0, "loads": []})
