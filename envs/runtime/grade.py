"""A task episode's reward, graded as every export grades it (envs/grading/): in a fresh container of the task's
start image, never the one the agent worked in (where it is root and could have changed anything), with the
agent's workdir copied over engine to engine (dependencies and build output left out: those are the task's),
and the grader keeping only its change to product code and running the tests as the unprivileged test user.

The backend (backend.py) starts the grading sandbox and carries the agent's tree there: Docker's builds the start
image once per task and machine (its tag names everything it is built from, docker_backend.py); a grading
sandbox is started ahead, at reset, with the folder the tree goes to made, so a reward() pays for the copy, one
command (the grader, then its results read back) and the tests, not for a start.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from envs.base import Sandbox
from envs.errors import EnvError
from envs.grading import image
from envs.grading.policy import Grading
from envs.runtime.episode import executor
from envs.runtime.reward import Reward, TestOutcome
from envs.task import Task
from envs.testrun.grading import with_current_guards

AGENT_DIR = "/var/tmp/autoinstall-grade/agent"
OUT_DIR = "/var/tmp/autoinstall-grade/out"
LOG = "/var/tmp/autoinstall-grade/grader-output.txt"
"""The grader's own output (read back only when it wrote no results)."""
CARRY_CAP = 2 * 1024 * 1024 * 1024
"""Bytes of the agent's workdir (dependencies and build output left out) carried to the grading container."""
RESULTS_CAP = 16 * 1024 * 1024
Carry = Callable[[Sandbox, str, Sandbox, str, Callable[[object], bool], int], "tuple[int, list[str]]"]
"""(agent, its workdir, grader, destination folder, keep(tar member), byte cap) -> (bytes carried, notes): the
agent's tree copied into the grading sandbox while the agent's processes are held still."""


class UngradableTaskError(EnvError, ValueError):
    """The task has no grading record (made before tasks were graded); remake it."""


def grading_of(task: Task) -> Grading:
    if task.grading is None:
        msg = (f"task {task.instance_id} has no grading record (it was made before tasks were graded in a fresh "
               f"container); remake the tasks of {task.env_id}: autoinstall tasks make {task.env_id}")
        raise UngradableTaskError(msg)
    return with_current_guards(task.grading)  # a guard fixed since the task was made reaches it too


class TaskGrader:
    """Grades one Environment's task episodes; keeps one grading container started ahead."""

    def __init__(self, task: Task, start: Callable[[], Sandbox], carry: Carry) -> None:
        """`start`: a started, fresh grading sandbox of the task's start image; `carry`: see Carry."""
        self.task, self._start, self._carry = task, start, carry
        self.grading = grading_of(task)
        self._next: Future[Sandbox] | None = None
        self._lock = threading.Lock()

    def prestart(self) -> None:
        """Start the next grading container in the background (once: a started one is kept)."""
        with self._lock:
            if self._next is None:
                self._next = executor().submit(self._ready)

    def _ready(self) -> Sandbox:
        """A started grading container with the folder the agent's tree is carried to."""
        sandbox = self._start()
        try:
            sandbox.exec(["mkdir", "-p", AGENT_DIR], timeout=60)
        except BaseException:
            sandbox.stop()
            raise
        return sandbox

    def _take(self) -> Sandbox:
        with self._lock:
            future, self._next = self._next, None
        if future is not None:
            try:
                return future.result()
            except Exception:  # noqa: BLE001 - the prestart failed: start one now (it raises what is wrong)
                pass
        return self._ready()

    def grade(self, agent: Sandbox, timeout_s: float | None = None) -> Reward:
        """Grade the agent's workdir as it is now; the next grading container is started meanwhile."""
        started = time.monotonic()
        grader = self._take()
        self.prestart()
        try:
            bulky = set(self.grading.rules.untransferred)

            def keep(member: object) -> bool:
                return not any(part in bulky for part in getattr(member, "name", "").split("/")[1:])

            carried, notes = self._carry(agent, self.grading.workdir, grader, AGENT_DIR, keep, CARRY_CAP)
            tree = f"{AGENT_DIR}/{Path(self.grading.workdir).name}"
            timeout = (timeout_s or self.grading.timeout_s) + 120
            raw = grader.exec(f"{image.GRADE} --agent {tree} --out {OUT_DIR} >{LOG} 2>&1; "
                              f"head -c {RESULTS_CAP} {OUT_DIR}/results.json", timeout=timeout,
                              output_cap=RESULTS_CAP).stdout
            try:
                results = json.loads(raw)
            except ValueError:
                said = grader.exec(["tail", "-c", "500", LOG], timeout=60).output
                results = {"reward": 0.0, "tests": {}, "problems": [f"the grader wrote no results: {said}"]}
        finally:
            executor().submit(grader.stop)
        return _reward(results, time.monotonic() - started, carried, notes)

    def close(self) -> None:
        with self._lock:
            future, self._next = self._next, None
        if future is not None and future.exception() is None:
            future.result().stop()


def _reward(results: dict, seconds: float, carried: int, notes: list[str]) -> Reward:
    tests = []
    for test_id, outcome in (results.get("tests") or {}).items():
        kind = outcome if outcome in ("passed", "failed", "error", "skipped") else "not_run"
        tests.append(TestOutcome(test_id=test_id, outcome=kind, message="" if kind != "not_run" else outcome))
    passed = sum(t.outcome == "passed" for t in tests)
    problems = [str(p) for p in results.get("problems") or []]
    return Reward(value=1.0 if results.get("reward") == 1.0 else 0.0, passed=passed, total=len(tests), tests=tests,
                  exit_code=int(results.get("exit_code", -1)), duration_s=float(results.get("test_seconds", 0.0)),
                  collection_ok=not results.get("timed_out", False), output_tail=str(results.get("output_tail", "")),
                  problems=problems, dropped=[f"{d.get('path')}: {d.get('reason')}" for d in results.get("dropped") or []],
                  grade_s=round(seconds, 3), carried_bytes=carried,
                  notes=[*notes, *([str(results["start_state"])] if results.get("start_state") else [])])
