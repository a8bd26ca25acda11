"""One episode's container and tool server: started, forked and ended, often in the background on a
shared pool. Episodes get the sandbox's direct channel (tool calls over a Unix socket, envs/docker/channel.py)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from envs.docker import DockerSandbox, DockerSandboxConfig, remove_image
from envs.runtime.spec import RuntimeSpec
from tools.session import ToolSession

Episode = tuple[DockerSandbox, ToolSession]
_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


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


def start_episode(spec: RuntimeSpec, labels: dict[str, str], base_url: str | None,
                  call_timeout: float, terminal: str = "persistent", image: str | None = None) -> Episode:
    """A started container from `image` (default `spec.image`) and its tool session; the container is removed
    on failure. A given `image` is a fork's snapshot: the episode owns it and removes it when it ends."""
    config = DockerSandboxConfig(
        image=image or spec.image,
        workdir=spec.workdir,
        limits=spec.limits,
        network=spec.network,
        env=spec.env,
        labels=labels,
        base_url=base_url,
        channel=True,
    )
    sandbox = ForkSandbox(config) if image else DockerSandbox(config)
    try:
        sandbox.start()
        return sandbox, ToolSession(sandbox, call_timeout=call_timeout, terminal=terminal).start()
    except BaseException:
        sandbox.stop()
        raise


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
