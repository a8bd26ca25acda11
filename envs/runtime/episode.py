"""One episode's container and tool server: started, forked and ended, often in the background on a
shared pool, or reset in place and forked by copying files (envs/runtime/restore.py). Episodes get the sandbox's
direct channel (tool calls over a Unix socket, envs/docker/channel.py)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from envs.docker import DockerSandbox, DockerSandboxConfig, remove_image
from envs.errors import EnvError
from envs.runtime.fastcall import DirectSession
from envs.runtime.restore import HostView, sync
from envs.runtime.spec import RuntimeSpec
from tools.base import ToolError
from tools.session import ToolServerError, ToolSession

Episode = tuple[DockerSandbox, ToolSession]
_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()
RESET_TIMEOUT_S = 30.0


def executor() -> ThreadPoolExecutor:
    """A pool for the asyncio API, wider than asyncio's default (min(32, cpus + 4) threads)."""
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=256, thread_name_prefix="environment")
        return _EXECUTOR


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


def reset_in_place(episode: Episode, view: HostView, pristine: HostView) -> bool:
    """Bring a running episode back to its image's state without a new container: the tool server kills every
    other process and empties /tmp, then its files are restored from the pristine container's
    (envs/runtime/restore.py). False when that could not be done fully (the caller starts a fresh one)."""
    sandbox, session = episode
    try:
        done = session.call("reset", call_timeout=RESET_TIMEOUT_S)
        if done.get("left") or done.get("scratch_left") or done.get("ipc_left") or sandbox.limit_error:
            return False
        sync(view.upper, pristine.merged, view.merged, view.skip | pristine.skip)
    except (OSError, ToolError, ToolServerError):
        return False
    return session.alive


def copy_episode(parent: Episode, view: HostView, fresh: Episode) -> bool:
    """Give the fresh episode the file system of `parent` (seen at `view`) by copying what that one changed (no
    commit), the parent frozen meanwhile: its processes run on, and what they are is strangers' code that must not
    steer this host's copying with symlinks swapped in mid-walk. False when the fresh one is not reachable from
    this host or a copy failed (commit instead)."""
    target = HostView.of(fresh[0])
    if target is None:
        return False
    try:
        with parent[0].frozen():  # type: ignore[attr-defined]
            sync(view.upper, view.merged, target.merged, view.skip | target.skip)
    except (OSError, EnvError):
        return False
    return True


def fork_episode(episode: Episode, spec: RuntimeSpec, labels: dict[str, str], base_url: str | None,
                 call_timeout: float, terminal: str = "persistent") -> Episode:
    """A new episode whose container starts with the file system of `episode`'s container (a `docker commit`,
    paused for its duration, then a container from that image); running processes are not carried over."""
    image = episode[0].snapshot("fork")
    try:
        return start_episode(spec, labels, base_url, call_timeout, terminal, image=image)
    except BaseException:
        remove_image(image, base_url=base_url)
        raise


def end_episode(episode: Episode | None) -> None:
    """Stop an episode's tool server and remove its container."""
    if episode is None:
        return
    sandbox, session = episode
    try:
        session.close()
    finally:
        sandbox.stop()
