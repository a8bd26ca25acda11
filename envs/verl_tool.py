"""`AutoinstallTool`: verl's multi-turn tool interface over envs.runtime.Environment (the class_name that
envs/export/verl.py writes in tools.yaml).

verl builds one tool object per tool name, but the tools of one trajectory must share one container, so the
Environments live in a process-wide registry keyed by the trajectory and counted by reference. Matched against
verl 0.8.0.dev (main at b178a3c, 2026-01-29; `BaseTool` is unchanged since v0.5), which calls tools two ways:

- ToolAgentLoop (v0.6 on; the only caller in v0.7 and main), per tool call: `create(create_kwargs=...)` without
  an id, `execute(id, args, agent_data=...)`, `release(id)`. The call joins the trajectory
  `agent_data.request_id`, whose container lives until that AgentData is garbage-collected or
  `end_trajectory(request_id)` is awaited; this loop never calls calc_reward.
- The SGLang rollout (v0.6 and before): `create(request_id, **create_kwargs)` for every tool, then `execute`,
  `calc_reward(request_id)` and `release(request_id)` per tool; the last release removes the container.

verl is optional: without it the class derives from a local stand-in with the same methods.
"""
from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envs.base import LABEL
from envs.runtime import Environment, EnvironmentStateError, RuntimeSpec
from envs.spec import Deselection
from envs.task import Task
from tools.profiles import get_profile
from tools.session import DEFAULT_CALL_TIMEOUT_S

RUN_TESTS = "run_tests"
"""The scoring tool of task rows (envs/export/verl_tasks.py): its step reward is the task's outcome."""
TRAJECTORY_LABEL = f"{LABEL}.verl.trajectory"
"""Container label holding the trajectory id (to find a trajectory's container, or clean up after a crash)."""
log = logging.getLogger(__name__)

try:  # verl is optional and never a dependency
    from verl.tools.base_tool import BaseTool as _Base
    from verl.tools.schemas import OpenAIFunctionToolSchema as _Schema
    from verl.tools.schemas import ToolResponse

    HAVE_VERL = True
except ImportError:
    HAVE_VERL = False
    _Schema = None

    class ToolResponse(BaseModel):  # type: ignore[no-redef]
        """verl.tools.schemas.ToolResponse, reduced to what these tools return."""

        text: str | None = None
        image: list[Any] | None = None
        video: list[Any] | None = None

    class _Base:  # type: ignore[no-redef]
        """The part of verl's BaseTool (verl/tools/base_tool.py) this adapter relies on."""

        def __init__(self, config: dict[str, Any], tool_schema: Any) -> None:
            self.config = config
            self.tool_schema = tool_schema
            function = tool_schema["function"] if isinstance(tool_schema, dict) else tool_schema.function
            self.name: str = function["name"] if isinstance(function, dict) else function.name

        def get_openai_tool_schema(self) -> Any:
            return self.tool_schema


class UnknownInstanceError(EnvironmentStateError, KeyError):
    """A call named an instance id that create() did not return, or that was released."""


class ToolConfig(BaseModel):
    """The `config` block of one tools.yaml entry."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["native"] = "native"
    """verl's tool type (native = a Python class)."""
    tool: str | None = None
    """The tool's name; must match tool_schema.function.name (envs/export/verl.py writes it)."""
    profile: str | None = None
    """Tool profile the names come from (default: the spec's, i.e. "default")."""
    call_timeout: float = DEFAULT_CALL_TIMEOUT_S
    """Seconds a tool call may wait for its answer."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra labels on the containers."""


class CreateKwargs(BaseModel):
    """`extra_info.tools_kwargs[tool]["create_kwargs"]` of a verl row (see envs/export/verl.py::row)."""

    model_config = ConfigDict(extra="forbid")
    image: str | None = None
    """Image to start from; overrides runtime_row's image_name."""
    workdir: str | None = None
    test_cmd: str | None = None
    tests: list[str] | None = None
    """The reward's test selection; None = runtime_row's PASS_TO_PASS + FAIL_TO_PASS."""
    runtime_row: str | None = None
    """JSON text of a swebench row (envs/export/swebench.py), read by RuntimeSpec.from_export_row."""
    task: str | None = None
    """JSON text of a task (envs/task.py; envs/export/verl_tasks.py): the episode starts from its bug state."""
    deselected: list[str] | None = None
    """With a task: the environment's deselected tests or files."""

    def runtime_spec(self) -> RuntimeSpec:
        """The spec each episode starts from; the explicit keys win over runtime_row's (or the task's)."""
        if self.task:
            left_out = [Deselection(test=t, reason="deselected at verification") for t in self.deselected or []]
            explicit = {"image": self.image, "workdir": self.workdir, "test_command": self.test_cmd,
                        "tests": self.tests}
            return RuntimeSpec.from_task(Task.model_validate_json(self.task), deselected=left_out,
                                         **{k: v for k, v in explicit.items() if v is not None})
        row: dict[str, Any] = json.loads(self.runtime_row) if self.runtime_row else {}
        explicit = {"image_name": self.image, "workdir": self.workdir, "test_cmd": self.test_cmd}
        row |= {k: v for k, v in explicit.items() if v}
        spec = RuntimeSpec.from_export_row(row)
        update: dict[str, Any] = {}
        if self.tests is not None:
            update["tests"] = self.tests
        if row.get("deselected"):  # from_export_row leaves out the swebench row's plain test ids
            update["deselected"] = [Deselection(test=t, reason="deselected at verification")
                                    for t in row["deselected"]]
        return RuntimeSpec.model_validate(spec.model_dump() | update) if update else spec


@dataclass
class _Episode:
    env: Environment
    refs: int = 0
    ready: Future[None] = field(default_factory=Future)
    """Done when the container has started (or failed to)."""
    finalizer: weakref.finalize | None = None
    """Set while a verl AgentData holds a reference (ToolAgentLoop); it drops it when collected."""


@dataclass
class _Call:
    """A ToolAgentLoop call: created without an id, joined to its trajectory at execute()."""

    spec: RuntimeSpec
    key: str | None = None


Make = Callable[[str, RuntimeSpec], Environment]


class _Registry:
    """The process's episodes by trajectory key, and the ToolAgentLoop calls by id. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.episodes: dict[str, _Episode] = {}
        self.calls: dict[str, _Call] = {}

    def reserve(self, key: str, spec: RuntimeSpec, make: Make, owner: object = None) -> tuple[_Episode, bool]:
        """Take a reference on `key`'s episode, creating it (not started) if needed; True = the caller starts
        it. A weak-referenceable `owner` holds one more reference, dropped when it is collected."""
        with self._lock:
            episode = self.episodes.get(key)
            starter = episode is None
            if episode is None:
                episode = self.episodes[key] = _Episode(make(key, spec))
            episode.refs += 1
            if owner is not None and episode.finalizer is None:
                try:
                    episode.finalizer = weakref.finalize(owner, self.owner_gone, key, episode)
                    episode.refs += 1
                except TypeError:  # not weak-referenceable: the episode ends with its last release
                    pass
            return episode, starter

    def add_call(self, spec: RuntimeSpec) -> str:
        call_id = uuid.uuid4().hex
        with self._lock:
            self.calls[call_id] = _Call(spec)
        return call_id

    def lookup(self, instance_id: str, make: Make, owner: object) -> tuple[_Episode, bool]:
        """The episode of an instance id, joining an unbound call to the trajectory `owner.request_id`
        (or its own id). Raises UnknownInstanceError."""
        with self._lock:
            call = self.calls.get(instance_id)
            if call is not None and call.key is None:
                call.key = getattr(owner, "request_id", None) or instance_id
                return self.reserve(call.key, call.spec, make, owner)
            key = call.key if call is not None and call.key is not None else instance_id
            episode = self.episodes.get(key)
        if episode is None:
            msg = f"no container for instance {instance_id!r}: create() it first (it may have been released)"
            raise UnknownInstanceError(msg)
        return episode, False

    def release(self, instance_id: str) -> Environment | None:
        """Give back an instance id's reference; the Environment to close when it was the last."""
        with self._lock:
            call = self.calls.pop(instance_id, None)
            if call is not None and call.key is None:
                return None
            key = call.key if call is not None and call.key is not None else instance_id
            episode = self.episodes.get(key)
            if episode is None:
                return None
            return self._unref(key, episode)

    def end_owner(self, key: str) -> Environment | None:
        """Drop the owner's reference now (detaching its finalizer); the Environment to close if it was the last."""
        with self._lock:
            episode = self.episodes.get(key)
            if episode is None or episode.finalizer is None or not episode.finalizer.detach():
                return None
            episode.finalizer = None
            return self._unref(key, episode)

    def owner_gone(self, key: str, episode: _Episode) -> None:
        """The owner was collected (any thread, no event loop): drop its reference, closing in a thread."""
        with self._lock:
            if self.episodes.get(key) is not episode:
                return
            episode.finalizer = None
            env = self._unref(key, episode)
        if env is not None:
            threading.Thread(target=_close_quietly, args=(env,), name=f"verl-close-{key}").start()

    def discard(self, key: str, episode: _Episode) -> None:
        """Forget an episode whose container did not start, whoever still holds references."""
        with self._lock:
            if self.episodes.get(key) is episode:
                del self.episodes[key]
            if episode.finalizer is not None:
                episode.finalizer.detach()

    def _unref(self, key: str, episode: _Episode) -> Environment | None:
        episode.refs -= 1
        if episode.refs > 0:
            return None
        del self.episodes[key]
        if episode.finalizer is not None:
            episode.finalizer.detach()
        return episode.env

    def keys(self) -> list[str]:
        with self._lock:
            return list(self.episodes)


_REGISTRY = _Registry()


class AutoinstallTool(_Base):
    """One of the agent tools (read_file, edit_file, create_file, search, lint, terminal) for verl."""

    def __init__(self, config: dict[str, Any], tool_schema: Any) -> None:
        """Args:
            config: the tools.yaml `config` block (see ToolConfig).
            tool_schema: the tools.yaml `tool_schema` (verl's OpenAIFunctionToolSchema, or its dict).

        Raises:
            ValueError: the config is invalid, or the tool is not one of the profile's.
        """
        self.settings = ToolConfig.model_validate(config or {})
        if _Schema is not None and isinstance(tool_schema, dict):
            tool_schema = _Schema.model_validate(tool_schema)
        super().__init__(config, tool_schema)
        names = [*get_profile(self.settings.profile or "default").names(), RUN_TESTS]
        if self.settings.tool not in (None, self.name) or self.name not in names:
            msg = (f"tools.yaml entry {self.name!r} (config.tool={self.settings.tool!r}): the schema's name and "
                   f"config.tool must agree and name a tool of the profile: {', '.join(names)}")
            raise ValueError(msg)

    async def create(self, instance_id: str | None = None, create_kwargs: dict[str, Any] | None = None,
                     **kwargs: Any) -> tuple[str, ToolResponse]:
        """Join the trajectory `instance_id`, starting its container if this is its first tool; without an id
        (ToolAgentLoop), return a call id that joins its trajectory at execute(). The spec comes from
        `create_kwargs` (ToolAgentLoop) or the keyword arguments (SGLang rollout): see CreateKwargs.

        Raises:
            pydantic.ValidationError: unknown or malformed create kwargs.
            EnvError: the container could not start.
        """
        spec = CreateKwargs.model_validate({**kwargs, **(create_kwargs or {})}).runtime_spec()
        if instance_id is None:
            return _REGISTRY.add_call(spec), ToolResponse()
        await self._started(instance_id, *_REGISTRY.reserve(instance_id, spec, self._make))
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any] | str,
                      **kwargs: Any) -> tuple[ToolResponse, float | None, dict[str, Any]]:
        """Run this tool in the trajectory's container. Returns (observation text, step reward, metrics
        duration_s and is_error); the model's mistakes come back as text, never as exceptions. The step reward
        is 0.0, except in a task's trajectory: run_tests gives the task's outcome (1.0 all pass, else 0.0) and
        the other tools none, so verl's tool_rewards hold only run_tests results."""
        env = await self._environment(instance_id, kwargs.get("agent_data"))
        if self.name == RUN_TESTS:
            reward = await env.areward()
            failing = [t.test_id for t in reward.tests if t.outcome != "passed"]
            text = (f"{reward.passed}/{reward.total} of the task's tests pass; reward {reward.value}."
                    + (f"\nNot passing: {', '.join(failing[:20])}" if failing else "")
                    + (f"\n{reward.output_tail[-2000:]}" if failing and reward.output_tail else ""))
            return ToolResponse(text=text), reward.value, {"duration_s": reward.duration_s, "is_error": False}
        obs = await env.astep(self.name, parameters)
        step = None if env.spec.task is not None else 0.0
        return ToolResponse(text=obs.output), step, {"duration_s": obs.duration_s, "is_error": obs.is_error}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """The pass fraction of the row's selected tests, run now in the trajectory's container."""
        env = await self._environment(instance_id, None)
        return (await env.areward()).value

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Give back this tool's reference; the last one removes the container. Unknown ids are ignored."""
        env = _REGISTRY.release(instance_id)
        if env is not None:
            await env.aclose()

    def _make(self, key: str, spec: RuntimeSpec) -> Environment:
        labels = {**self.settings.labels, TRAJECTORY_LABEL: key}
        return Environment(spec, profile=self.settings.profile, call_timeout=self.settings.call_timeout,
                           labels=labels)

    async def _environment(self, instance_id: str, owner: object) -> Environment:
        return await self._started(instance_id, *_REGISTRY.lookup(instance_id, self._make, owner))

    async def _started(self, key: str, episode: _Episode, starter: bool) -> Environment:
        """Start the episode's container (starter) or wait until whoever started it is done."""
        if not starter:
            await asyncio.wrap_future(episode.ready)
            return episode.env
        try:
            await episode.env.areset()
        except BaseException as e:
            _REGISTRY.discard(key, episode)
            episode.ready.set_exception(e)
            await asyncio.shield(episode.env.aclose())
            raise
        episode.ready.set_result(None)
        return episode.env


async def end_trajectory(request_id: str) -> None:
    """End a ToolAgentLoop trajectory's container now instead of when its AgentData is collected."""
    env = _REGISTRY.end_owner(request_id)
    if env is not None:
        await env.aclose()


def open_trajectories() -> list[str]:
    """The trajectory keys that have a container (or one starting) in this process."""
    return _REGISTRY.keys()


def _close_quietly(env: Environment) -> None:
    try:
        env.close()
    except Exception:  # a background thread has nobody to raise to
        log.exception("could not remove a verl trajectory's container")


__all__ = ["HAVE_VERL", "RUN_TESTS", "TRAJECTORY_LABEL", "AutoinstallTool", "CreateKwargs", "ToolConfig", "ToolResponse",
           "UnknownInstanceError", "end_trajectory", "open_trajectories"]
