"""One episode's container and tool server: started and ended, often in the background on a shared pool."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from envs.docker import DockerSandbox, DockerSandboxConfig
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


def start_episode(spec: RuntimeSpec, labels: dict[str, str], base_url: str | None,
                  call_timeout: float) -> Episode:
    """A started container from `spec.image` and its tool session; the container is removed on failure."""
    config = DockerSandboxConfig(
        image=spec.image,
        workdir=spec.workdir,
        limits=spec.limits,
        network=spec.network,
        env=spec.env,
        labels=labels,
        base_url=base_url,
    )
    sandbox = DockerSandbox(config)
    try:
        sandbox.start()
        return sandbox, ToolSession(sandbox, call_timeout=call_timeout).start()
    except BaseException:
        sandbox.stop()
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
