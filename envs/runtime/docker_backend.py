"""The default EpisodeBackend (backend.py): one Docker container per episode with its tool server over the direct
channel (tool calls over a Unix socket, envs/docker/channel.py); resets in place from a pristine container of
the image (`Pristine`) and forks by copying files where the engine keeps them on this host (overlay2,
envs/runtime/restore.py), else by a commit; task grading in a fresh container of the task's start image, built
once per task and machine. The only runtime module that knows Docker."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

from envs.base import Sandbox
from envs.docker import (
    KIND_LABEL,
    TASK_KIND,
    DockerSandbox,
    DockerSandboxConfig,
    build_image,
    image_labels,
    remove_image,
)
from envs.errors import ImageNotFoundError
from envs.grading import image
from envs.runtime.backend import Episode
from envs.runtime.episode import copy_episode, end_episode, reset_in_place
from envs.runtime.fastcall import DirectSession
from envs.runtime.grade import TaskGrader, grading_of
from envs.runtime.restore import HostView
from envs.runtime.spec import RuntimeSpec
from envs.task import Task

_BUILD_LOCK = threading.Lock()
_BUILT: set[str] = set()


class ForkSandbox(DockerSandbox):
    """A sandbox started from a fork's snapshot image, which it removes when it stops (it is its only user)."""

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            remove_image(self.config.image or "", base_url=self.config.base_url)


def episode_config(spec: RuntimeSpec, labels: dict[str, str], base_url: str | None,
                   image: str | None = None) -> DockerSandboxConfig:
    """How an episode's container is started (from `image`, default `spec.image`)."""
    # No bytecode is written during an episode: an edit that keeps a file's size within the second of an
    # earlier import (`a + b` -> `a - b`) would otherwise run the stale .pyc, and the reward would lie.
    env = {"PYTHONDONTWRITEBYTECODE": "1", **spec.env}
    return DockerSandboxConfig(image=image or spec.image, workdir=spec.workdir, limits=spec.limits,
                               network=spec.network, env=env, labels=labels, base_url=base_url, channel=True)


def start_episode(spec: RuntimeSpec, labels: dict[str, str], base_url: str | None,
                  call_timeout: float, terminal: str = "persistent", image: str | None = None) -> Episode:
    """A started container from `image` (default `spec.image`) and its tool session; the container is removed
    on failure. A given `image` is a fork's snapshot: the episode owns it and removes it when it ends."""
    config = episode_config(spec, labels, base_url, image)
    sandbox = ForkSandbox(config) if image else DockerSandbox(config)
    try:
        sandbox.start()
        return sandbox, DirectSession(sandbox, call_timeout=call_timeout, terminal=terminal).start()
    except BaseException:
        sandbox.stop()
        raise


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
            build_image(Path(tmp), tag, labels={KIND_LABEL: TASK_KIND, "autoinstall.task": task.instance_id},
                        buildargs={}, base_url=base_url)
        _BUILT.add(tag)
    return tag


class Pristine:
    """One started, never touched container per image (and config): the source of a reset in place. Shared by
    the Environments of a process, counted, and removed with the last of them."""

    _lock = threading.Lock()
    _live: dict[str, tuple[DockerSandbox, HostView, int]] = {}

    @classmethod
    def acquire(cls, config: DockerSandboxConfig) -> HostView | None:
        """The pristine view for containers started with `config`, None when there is none here."""
        key = config.model_dump_json()
        with cls._lock:
            if key in cls._live:
                sandbox, view, n = cls._live[key]
                cls._live[key] = (sandbox, view, n + 1)
                return view
            sandbox = DockerSandbox(config.model_copy(update={"labels": {**config.labels,
                                                                          "autoinstall.pristine": "1"}}))
            sandbox.start()
            found = HostView.of(sandbox)
            if found is None:
                sandbox.stop()
                return None
            cls._live[key] = (sandbox, found, 1)
            return found

    @classmethod
    def release(cls, config: DockerSandboxConfig) -> None:
        """One user fewer; the container is removed with the last one."""
        key = config.model_dump_json()
        with cls._lock:
            if key not in cls._live:
                return
            sandbox, view, n = cls._live.pop(key)
            if n > 1:
                cls._live[key] = (sandbox, view, n - 1)
                return
        sandbox.stop()


def _carry(agent: Sandbox, src: str, grader: Sandbox, dest: str, keep: object, cap: int) -> tuple[int, list[str]]:
    """The agent's tree, engine to engine, its processes frozen meanwhile."""
    with agent.frozen():  # type: ignore[attr-defined]
        return agent.copy_tree_to(src, grader, dest, keep, cap)  # type: ignore[attr-defined]


class DockerBackend:
    """Episodes in Docker containers of the engine at `base_url` (default DOCKER_HOST or the local socket)."""

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url
        self._views: dict[str, HostView | None] = {}
        self._lock = threading.Lock()

    def start(self, spec: RuntimeSpec, labels: dict[str, str], call_timeout: float, terminal: str) -> Episode:
        return start_episode(spec, labels, self.base_url, call_timeout, terminal)

    def end(self, episode: Episode | None) -> None:
        if episode is not None:
            with self._lock:
                self._views.pop(self.container_id(episode[0]) or "", None)
        end_episode(episode)

    def container_id(self, sandbox: Sandbox) -> str | None:
        return getattr(sandbox, "container_id", None)

    def prepare_reset(self, spec: RuntimeSpec, labels: dict[str, str]) -> HostView | None:
        return Pristine.acquire(episode_config(spec, labels, self.base_url))

    def reset_in_place(self, episode: Episode, prepared: object) -> bool:
        view = self._view(episode[0])
        return isinstance(prepared, HostView) and view is not None and reset_in_place(episode, view, prepared)

    def release(self, spec: RuntimeSpec, labels: dict[str, str]) -> None:
        Pristine.release(episode_config(spec, labels, self.base_url))

    def can_copy(self, episode: Episode) -> bool:
        return self._view(episode[0]) is not None

    def copy(self, parent: Episode, fresh: Episode) -> bool:
        view = self._view(parent[0])
        return view is not None and copy_episode(parent, view, fresh)

    def fork(self, episode: Episode, spec: RuntimeSpec, labels: dict[str, str], call_timeout: float,
             terminal: str) -> Episode:
        """A `docker commit` of the episode's container (paused for its duration), then a container from that
        image; running processes are not carried over."""
        snapshot = episode[0].snapshot("fork")
        try:
            return start_episode(spec, labels, self.base_url, call_timeout, terminal, image=snapshot)
        except BaseException:
            remove_image(snapshot, base_url=self.base_url)
            raise

    def grader(self, task: Task, spec: RuntimeSpec, labels: dict[str, str]) -> TaskGrader:
        grading_of(task)  # no grading record: fail now, not in the background

        def start_once() -> Sandbox:
            tag = start_image(task, self.base_url)
            config = episode_config(spec, {**labels, "autoinstall.grading": "1"}, self.base_url, tag)
            config = config.model_copy(update={"channel": False, "network": False})
            sandbox = DockerSandbox(DockerSandboxConfig.model_validate(config.model_dump()))
            sandbox.start()
            return sandbox

        def start() -> Sandbox:
            try:
                return start_once()
            except ImageNotFoundError:  # removed since this process built it (a cleanup, an export's): again
                with _BUILD_LOCK:
                    _BUILT.clear()
                return start_once()

        return TaskGrader(task, start, _carry)

    def _view(self, sandbox: Sandbox) -> HostView | None:
        """The running container's files on this host (looked up once per container)."""
        key = self.container_id(sandbox) or ""
        with self._lock:
            if key not in self._views:
                self._views[key] = HostView.of(sandbox)
            return self._views[key]
