"""Environment: the runtime an RL trainer or an agent calls, one container per episode.

    spec = RuntimeSpec.from_spec_file("envs/foo/spec.json")
    with Environment(spec, profile="anthropic") as env:
        info = env.reset()                       # a fresh container from the image + its tool server
        obs = env.step("bash", {"command": "ls"})
        reward = env.reward()                    # pass fraction of the verification tests

Each Environment owns its container and tool session, so many run at once from threads (calls on one
instance are thread-safe) or from asyncio (`areset`, `astep`, `areward`, `aclose`).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from envs.base import LABEL, Limits
from envs.docker import DockerSandbox, DockerSandboxConfig
from envs.errors import EnvNotStartedError
from envs.spec import Deselection, EnvSpec, TestResult
from envs.testrun import run_tests
from tools.profiles import get_profile
from tools.session import DEFAULT_CALL_TIMEOUT_S, ToolSession

T = TypeVar("T")
Episode = tuple[DockerSandbox, ToolSession]
PLUGIN_DIR = "/var/tmp/autoinstall-reward"
PLUGIN = "autoinstall_reward_select"
PLUGIN_SOURCE = '''"""Keeps only the tests named (exactly or by prefix) in the file $AUTOINSTALL_SELECT."""
import os


def selects(entry, node):
    return node == entry or node.startswith((entry + "::", entry + "/", entry + "["))


def pytest_collection_modifyitems(session, config, items):
    path = os.environ.get("AUTOINSTALL_SELECT")
    if not path:
        return
    with open(path) as f:
        want = [w.strip() for w in f.read().splitlines() if w.strip()]
    keep = [i for i in items if any(selects(w, i.nodeid) for w in want)]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep
'''
"""A pytest plugin put in the container to run only a selection, whatever the test command's paths."""
_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


class EnvironmentStateError(EnvNotStartedError):
    """A call that needs a running episode came before reset() or after close()."""


def selects(entry: str, test_id: str) -> bool:
    """True when the selection entry names `test_id`: exactly, or as its file, directory, class or
    unparametrized name (the same rule the in-container plugin applies)."""
    entry = entry.strip().removeprefix("./")
    return test_id == entry or test_id.startswith((entry + "::", entry + "/", entry + "["))


class RuntimeSpec(BaseModel):
    """What an Environment starts from: the verified image and how to judge it."""

    model_config = ConfigDict(extra="forbid")
    image: str
    """Image (tag or id) each episode's container starts from."""
    workdir: str = "/workspace"
    """The repository's directory inside the image; tools are confined to it."""
    test_command: str | None = None
    """The verification test command; reward() needs one."""
    test_runner: Literal["pytest", "unittest", "custom", "none"] = "pytest"
    """pytest gets per-test results (JUnit) and selections; other runners give a pass rate only."""
    deselected: list[Deselection] = Field(default_factory=list)
    """Tests or files always left out (broken or flaky at verification)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for every command in the container (tools and tests)."""
    tests: list[str] = Field(default_factory=list)
    """The default reward selection (pytest node ids, files or classes, e.g. PASS_TO_PASS); empty = all."""
    limits: Limits = Field(default_factory=Limits)
    """cpus, memory, pids and disk of each container."""
    network: bool = False
    """Network access inside the container (off by default, as at verification)."""
    profile: str = "default"
    """Tool profile used when Environment is not given one (see tools/profiles.py)."""
    test_timeout_s: float = 1800.0
    """Seconds a reward run may take before it is killed (its tests then count as failed)."""

    @classmethod
    def from_env_spec(cls, spec: EnvSpec, *, allow_failed: bool = False, **overrides: Any) -> Self:
        """From a catalog record. `tests` defaults to the tests that passed at verification, minus flaky
        ones (so a fresh episode scores 1.0). Raises ValueError for a failed or image-less spec."""
        if spec.status != "verified" and not allow_failed:
            raise ValueError(
                f"environment {spec.source.name!r} is {spec.status}, not verified; pass "
                "allow_failed=True to use it anyway"
            )
        if not spec.image:
            raise ValueError(f"environment {spec.source.name!r} has no image (its install did not finish)")
        tests: list[str] = []
        last = spec.verification.last_run if spec.verification else None
        if last is not None:
            flaky = set(spec.verification.flaky) if spec.verification else set()
            tests = [r.test_id for r in last.results if r.outcome == "passed" and r.test_id not in flaky]
        fields: dict[str, Any] = {
            "image": spec.image,
            "test_command": spec.test_command or spec.plan.test_command,
            "test_runner": spec.plan.test_runner,
            "deselected": spec.deselected,
            "env": spec.env,
            "tests": tests,
        }
        return cls.model_validate(fields | overrides)

    @classmethod
    def from_spec_file(cls, path: str | Path, **overrides: Any) -> Self:
        """From a spec.json written by the pipeline (see from_env_spec)."""
        return cls.from_env_spec(EnvSpec.model_validate_json(Path(path).read_text()), **overrides)

    @classmethod
    def from_export_row(
        cls,
        row: dict[str, Any],
        *,
        tests: Literal["pass_to_pass", "all_listed", "all"] = "all_listed",
        **overrides: Any,
    ) -> Self:
        """From a swebench-style row. Keys read: `image_name` (required); `test_cmd` or `test_command`
        (a string; the first of a list); `test_runner` (default pytest); `PASS_TO_PASS` and
        `FAIL_TO_PASS` (lists or JSON-encoded lists of node ids); `workdir`; `env` (dict). Other keys
        (instance_id, repo, base_commit, ...) are ignored. `tests` picks the default selection:
        PASS_TO_PASS + FAIL_TO_PASS ("all_listed"), PASS_TO_PASS only, or every test ("all")."""
        if not row.get("image_name"):
            raise ValueError("an export row needs image_name")

        def ids(key: str) -> list[str]:
            value = row.get(key) or []
            value = json.loads(value) if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{key} must be a list of test ids (or its JSON text)")
            return value

        command = row.get("test_cmd") or row.get("test_command")
        command = command[0] if isinstance(command, list) and command else command
        chosen = {
            "pass_to_pass": ids("PASS_TO_PASS"),
            "all_listed": ids("PASS_TO_PASS") + ids("FAIL_TO_PASS"),
            "all": [],
        }[tests]
        fields: dict[str, Any] = {
            "image": row["image_name"],
            "test_command": command or None,
            "test_runner": row.get("test_runner") or "pytest",
            "tests": chosen,
        }
        fields |= {k: row[k] for k in ("workdir", "env") if row.get(k)}
        return cls.model_validate(fields | overrides)


class Observation(BaseModel):
    """What one step gives back to the model."""

    output: str
    """The text the model reads."""
    is_error: bool = False
    """True when the call failed (unknown tool, bad arguments, tool error); output says why."""
    tool: str
    """The tool name as the model called it."""
    data: dict[str, Any] | None = None
    """Structured extras from the tool (exit code, matches, ...)."""
    duration_s: float = 0.0


class TestOutcome(BaseModel):
    __test__ = False
    test_id: str
    outcome: Literal["passed", "failed", "error", "skipped", "not_run"]
    """not_run: selected but absent from the results (it counts as failed)."""
    message: str = ""


class Reward(BaseModel):
    """The score of one reward() call."""

    value: float
    """passed / selected (selection) or passed / ran (all tests; skipped ones are left out)."""
    passed: int
    total: int
    """The denominator of value."""
    tests: list[TestOutcome] = Field(default_factory=list)
    exit_code: int
    duration_s: float
    collection_ok: bool = True
    output_tail: str = ""


def score(results: list[TestResult], selection: list[str]) -> tuple[int, int, list[TestOutcome]]:
    """(passed, total, per-test outcomes) over `selection` (entries as in `selects`), or over all
    tests that ran when it is empty."""
    if not selection:
        tests = [TestOutcome(test_id=r.test_id, outcome=r.outcome, message=r.message) for r in results]
        return (
            sum(t.outcome == "passed" for t in tests),
            sum(t.outcome in ("passed", "failed", "error") for t in tests),
            tests,
        )
    chosen: dict[str, TestOutcome] = {}
    for entry in selection:
        matched = [r for r in results if selects(entry, r.test_id)]
        for r in matched:
            chosen.setdefault(r.test_id, TestOutcome(test_id=r.test_id, outcome=r.outcome, message=r.message))
        if not matched:
            chosen.setdefault(
                entry, TestOutcome(test_id=entry, outcome="not_run", message="selected but not run")
            )
    tests = list(chosen.values())
    return sum(t.outcome == "passed" for t in tests), len(tests), tests


def _executor() -> ThreadPoolExecutor:
    """A pool for the asyncio API, wider than asyncio's default (min(32, cpus + 4) threads)."""
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=256, thread_name_prefix="environment")
        return _EXECUTOR


class Environment:
    """One episode at a time of a verified environment: reset, step, reward, close."""

    def __init__(
        self,
        spec: RuntimeSpec,
        *,
        profile: str | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT_S,
        prestart: bool = False,
        labels: dict[str, str] | None = None,
        base_url: str | None = None,
    ) -> None:
        """Args:
            spec: what to start (see RuntimeSpec's constructors).
            profile: tool profile; default spec.profile.
            call_timeout: seconds a tool call may wait for its answer (terminal adds its own timeout).
            prestart: keep the next episode's container and tool server started in the background, so
                reset() only swaps them in (one idle container more per environment, ~10 MiB).
            labels: extra labels on the containers (e.g. to find them for cleanup).
            base_url: Docker engine address (default DOCKER_HOST or the local socket).

        Raises:
            UnknownProfileError: the profile does not exist.
        """
        self.spec = spec
        self.profile = get_profile(profile or spec.profile)
        self.call_timeout = call_timeout
        self.labels = {f"{LABEL}.runtime": "1", **(labels or {})}
        self.base_url = base_url
        self._lock = threading.RLock()
        self.prestart = prestart
        self._sandbox: DockerSandbox | None = None
        self._session: ToolSession | None = None
        self._spare: Future[Episode] | None = None
        self._removing: list[Future[None]] = []
        self._closed = False
        self._episode = 0
        self._plugin_ready = False

    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI function-calling schemas of the tools, named as in the chosen profile."""
        return self.profile.schemas()

    @property
    def container_id(self) -> str | None:
        return self._sandbox.container_id if self._sandbox else None

    def reset(self) -> dict[str, Any]:
        """Start a new episode: a fresh container from the image and its tool server. The previous
        episode's container is removed in the background (close() waits for that).

        Returns:
            Info: tools (schemas), profile, workdir, image, container_id, episode, prestarted (the
            container was started ahead, see `prestart`), reset_s.

        Raises:
            EnvironmentStateError: the environment was closed.
            EnvError: the engine or image is unavailable, or the tool server did not start.
        """
        start = time.perf_counter()
        with self._lock:
            self._check_open()
            old = self._take()
            self._removing = [
                f for f in self._removing if not f.done() or f.exception()
            ]  # keep errors for close
            if old is not None:
                self._removing.append(_executor().submit(_end, old))
            spare = self._take_spare()
            sandbox, session = spare or self._start_episode()
            if self.prestart:
                self._spare = _executor().submit(self._start_episode)
            self._sandbox, self._session, self._plugin_ready = sandbox, session, False
            self._episode += 1
            return {
                "tools": self.tools(),
                "profile": self.profile.name,
                "workdir": self.spec.workdir,
                "image": self.spec.image,
                "container_id": sandbox.container_id,
                "episode": self._episode,
                "prestarted": spare is not None,
                "reset_s": time.perf_counter() - start,
            }

    def step(self, tool_name: str, arguments: dict[str, Any] | str | None = None) -> Observation:
        """Run one tool call as the model made it.

        Args:
            tool_name: a tool name of the profile.
            arguments: its arguments, as a dict or the JSON text the model produced.

        Returns:
            The observation; the model's mistakes (unknown tool, bad arguments, failing tool) come
            back with is_error=True, never as exceptions.

        Raises:
            EnvironmentStateError: no episode is running (reset() not called, or closed).
        """
        session = self._running()[1]
        start = time.perf_counter()
        result = self.profile.call(session, tool_name, arguments)
        return Observation(
            output=result.output,
            is_error=result.is_error,
            tool=tool_name,
            data=result.data,
            duration_s=time.perf_counter() - start,
        )

    def reward(self, tests: list[str] | None = None, *, timeout_s: float | None = None) -> Reward:
        """Run the verification tests in the episode's container and score them.

        Args:
            tests: pytest node ids (or files, classes) to run; None = the spec's `tests`; [] = all.
            timeout_s: seconds for the run (default spec.test_timeout_s).

        Returns:
            The pass fraction over the selection (a selected test that did not run counts as failed),
            or over all tests that ran, with per-test outcomes.

        Raises:
            EnvironmentStateError: no episode is running.
            ValueError: the spec has no test command, or a selection was given to a non-pytest runner.
        """
        sandbox = self._running()[0]
        selection = self.spec.tests if tests is None else tests
        if not self.spec.test_command or self.spec.test_runner == "none":
            raise ValueError("this environment has no test command, so it has no reward")
        is_pytest = self.spec.test_runner == "pytest"
        if selection and not is_pytest:
            raise ValueError(f"a test selection needs the pytest runner; this one is {self.spec.test_runner}")
        command, env = self.spec.test_command, dict(self.spec.env)
        if selection:
            select_file = f"{PLUGIN_DIR}/select-{uuid.uuid4().hex[:8]}.txt"
            self._install_plugin(sandbox)
            sandbox.write_file(select_file, "\n".join(selection).encode())
            command = (
                f'export PYTHONPATH={PLUGIN_DIR}"${{PYTHONPATH:+:$PYTHONPATH}}" '
                f"AUTOINSTALL_SELECT={select_file}; {command} -p {PLUGIN}"
            )
        run = run_tests(sandbox, command, self.spec.test_runner, self.spec.deselected,
                        timeout_s or self.spec.test_timeout_s, env or None)
        if is_pytest:
            passed, total, outcomes = score(run.results, selection)
        else:
            passed, total, outcomes = run.passed, run.ran, []
        return Reward(
            value=passed / total if total else 0.0,
            passed=passed,
            total=total,
            tests=outcomes,
            exit_code=run.exit_code,
            duration_s=run.duration_s,
            collection_ok=run.collection_ok,
            output_tail=run.output_tail,
        )

    def close(self) -> None:
        """Remove the episode's container (and the prestarted one) and end the tool session, waiting
        for earlier episodes' removals too. Idempotent; the environment cannot be reset afterwards.

        Raises:
            EnvError: a container could not be removed (the engine stopped answering).
        """
        with self._lock:
            self._closed = True
            try:
                _end(self._take())
                _end(self._take_spare())
            finally:
                removing, self._removing = self._removing, []
                errors = [e for e in (f.exception() for f in removing) if e is not None]
            if errors:
                raise errors[0]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # asyncio
    async def areset(self) -> dict[str, Any]:
        """reset() in a worker thread."""
        return await _in_thread(self.reset)

    async def astep(self, tool_name: str, arguments: dict[str, Any] | str | None = None) -> Observation:
        """step() in a worker thread."""
        return await _in_thread(lambda: self.step(tool_name, arguments))

    async def areward(self, tests: list[str] | None = None, *, timeout_s: float | None = None) -> Reward:
        """reward() in a worker thread."""
        return await _in_thread(lambda: self.reward(tests, timeout_s=timeout_s))

    async def aclose(self) -> None:
        """close() in a worker thread."""
        await _in_thread(self.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # internals
    def _check_open(self) -> None:
        if self._closed:
            raise EnvironmentStateError("this Environment is closed; create a new one to start more episodes")

    def _running(self) -> tuple[DockerSandbox, ToolSession]:
        with self._lock:
            self._check_open()
            if self._sandbox is None or self._session is None:
                raise EnvironmentStateError("no episode is running: call reset() first")
            return self._sandbox, self._session

    def _install_plugin(self, sandbox: DockerSandbox) -> None:
        with self._lock:
            if not self._plugin_ready:
                sandbox.write_file(f"{PLUGIN_DIR}/{PLUGIN}.py", PLUGIN_SOURCE.encode())
                self._plugin_ready = True

    def _start_episode(self) -> Episode:
        config = DockerSandboxConfig(
            image=self.spec.image,
            workdir=self.spec.workdir,
            limits=self.spec.limits,
            network=self.spec.network,
            env=self.spec.env,
            labels=self.labels,
            base_url=self.base_url,
        )
        sandbox = DockerSandbox(config)
        try:
            sandbox.start()
            return sandbox, ToolSession(sandbox, call_timeout=self.call_timeout).start()
        except BaseException:
            sandbox.stop()
            raise

    def _take(self) -> Episode | None:
        """The running episode, which the caller now owns (it is no longer the environment's)."""
        episode = (self._sandbox, self._session) if self._sandbox and self._session else None
        self._sandbox = self._session = None
        return episode

    def _take_spare(self) -> Episode | None:
        """The prestarted episode, or None when there is none or it did not start or died."""
        spare, self._spare = self._spare, None
        if spare is None or spare.exception() is not None:
            return None
        episode = spare.result()
        if not episode[1].alive:
            _end(episode)
            return None
        return episode


def _end(episode: Episode | None) -> None:
    """Stop an episode's tool server and remove its container."""
    if episode is None:
        return
    sandbox, session = episode
    try:
        session.close()
    finally:
        sandbox.stop()


async def _in_thread(fn: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(_executor(), fn)


__all__ = [
    "Environment",
    "EnvironmentStateError",
    "Observation",
    "Reward",
    "RuntimeSpec",
    "TestOutcome",
    "score",
    "selects",
]
