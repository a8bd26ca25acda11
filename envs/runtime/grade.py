"""A task episode's reward, graded as every export grades it (envs/grading/): in a fresh container of the task's
start image, never the one the agent worked in (where it is root and could have changed anything), with the
agent's workdir copied over engine to engine (dependencies and build output left out: those are the task's),
and the grader keeping only its change to product code and running the tests as the unprivileged test user.

The start image is built once per task and machine (its tag names everything it is built from); a grading
container is started ahead, at reset, so a reward() pays for the copy and the tests, not for a start.
"""
from __future__ import annotations

import json
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path

from envs.docker import KIND_LABEL, TASK_KIND, DockerSandbox, DockerSandboxConfig, build_image, image_labels
from envs.errors import EnvError
from envs.grading import image
from envs.grading.policy import Grading
from envs.runtime.episode import episode_config, executor
from envs.runtime.reward import Reward, TestOutcome
from envs.runtime.spec import RuntimeSpec
from envs.task import Task

AGENT_DIR = "/var/tmp/autoinstall-grade/agent"
OUT_DIR = "/var/tmp/autoinstall-grade/out"
CARRY_CAP = 2 * 1024 * 1024 * 1024
"""Bytes of the agent's workdir (dependencies and build output left out) carried to the grading container."""
RESULTS_CAP = 16 * 1024 * 1024
_BUILD_LOCK = threading.Lock()
_BUILT: set[str] = set()


class UngradableTaskError(EnvError, ValueError):
    """The task has no grading record (made before tasks were graded); remake it."""


def grading_of(task: Task) -> Grading:
    if task.grading is None:
        msg = (f"task {task.instance_id} has no grading record (it was made before tasks were graded in a fresh "
               f"container); remake the tasks of {task.env_id}: autoinstall tasks make {task.env_id}")
        raise UngradableTaskError(msg)
    return task.grading


def start_image(task: Task, base_url: str | None = None) -> str:
    """The task's start image, built now unless this engine has it (envs/grading/image.py)."""
    grading = grading_of(task)
    name = "".join(c if c.isalnum() or c in "._-" else "-" for c in task.instance_id.lower()).strip("-._") or "task"
    tag = image.image_tag(name, task.image, task.bug_patch, grading)
    with _BUILD_LOCK:
        if tag in _BUILT or image_labels(tag, base_url=base_url) is not None:
            _BUILT.add(tag)
            return tag
        with tempfile.TemporaryDirectory(prefix="autoinstall-start-") as tmp:
            image.write_context(Path(tmp), task.image, task.bug_patch, grading, label=f"task {task.instance_id}")
            build_image(Path(tmp), tag, labels={KIND_LABEL: TASK_KIND, "autoinstall.task": task.instance_id}, buildargs={},
                        base_url=base_url)
        _BUILT.add(tag)
    return tag


class TaskGrader:
    """Grades one Environment's task episodes; keeps one grading container started ahead."""

    def __init__(self, task: Task, spec: RuntimeSpec, labels: dict[str, str], base_url: str | None) -> None:
        self.task, self.spec, self.labels, self.base_url = task, spec, labels, base_url
        self.grading = grading_of(task)
        self._next: Future[DockerSandbox] | None = None
        self._lock = threading.Lock()

    def prestart(self) -> None:
        """Start the next grading container in the background (once: a started one is kept)."""
        with self._lock:
            if self._next is None:
                self._next = executor().submit(self._start)

    def _start(self) -> DockerSandbox:
        tag = start_image(self.task, self.base_url)
        config = episode_config(self.spec, {**self.labels, "autoinstall.grading": "1"}, self.base_url, tag)
        config = config.model_copy(update={"channel": False, "network": False})
        sandbox = DockerSandbox(DockerSandboxConfig.model_validate(config.model_dump()))
        sandbox.start()
        return sandbox

    def _take(self) -> DockerSandbox:
        with self._lock:
            future, self._next = self._next, None
        if future is not None:
            try:
                return future.result()
            except Exception:  # noqa: BLE001 - the prestart failed: start one now (it raises what is wrong)
                pass
        return self._start()

    def grade(self, agent: DockerSandbox, timeout_s: float | None = None) -> Reward:
        """Grade the agent's workdir as it is now; the next grading container is started meanwhile."""
        started = time.monotonic()
        grader = self._take()
        self.prestart()
        try:
            grader.exec(["mkdir", "-p", AGENT_DIR], timeout=60)
            bulky = set(self.grading.rules.untransferred)

            def keep(member: object) -> bool:
                return not any(part in bulky for part in getattr(member, "name", "").split("/")[1:])

            with agent.frozen():
                carried, notes = agent.copy_tree_to(self.grading.workdir, grader, AGENT_DIR, keep, CARRY_CAP)
            tree = f"{AGENT_DIR}/{Path(self.grading.workdir).name}"
            timeout = (timeout_s or self.grading.timeout_s) + 120
            done = grader.exec(f"{image.GRADE} --agent {tree} --out {OUT_DIR}", timeout=timeout)
            raw = grader.exec(["head", "-c", str(RESULTS_CAP), f"{OUT_DIR}/results.json"], timeout=60).stdout
        finally:
            executor().submit(grader.stop)
        try:
            results = json.loads(raw)
        except ValueError:
            results = {"reward": 0.0, "tests": {}, "problems": [f"the grader wrote no results: {done.output[-500:]}"]}
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
                  grade_s=round(seconds, 3), carried_bytes=carried, notes=notes)
