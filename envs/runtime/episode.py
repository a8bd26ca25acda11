"""What every backend's episodes share: the pool that starts and ends them in the background, ending one, and the
in-place reset and the copying fork over host views of their file systems (envs/runtime/restore.py). Where an
episode runs is the backend's (backend.py; Docker's in docker_backend.py)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from envs.errors import EnvError
from envs.runtime.backend import Episode
from envs.runtime.restore import HostView, sync
from tools.base import ToolError
from tools.session import ToolServerError

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


def reset_in_place(episode: Episode, view: HostView, pristine: HostView) -> bool:
    """Bring a running episode back to its image's state without a new container: the tool server kills every
    other process and empties /tmp, then its files are restored from the pristine container's
    (envs/runtime/restore.py). False when that could not be done fully (the caller starts a fresh one)."""
    sandbox, session = episode
    try:
        done = session.call("reset", call_timeout=RESET_TIMEOUT_S)
        left = done.get("left") or done.get("scratch_left") or done.get("ipc_left")
        if left or getattr(sandbox, "limit_error", None):  # a Docker sandbox's disk watch may have stopped it
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
        with parent[0].frozen():  # type: ignore[attr-defined]  # can_copy: a sandbox with a host view has it
            sync(view.upper, view.merged, target.merged, view.skip | target.skip)
    except (OSError, EnvError):
        return False
    return True


def end_episode(episode: Episode | None) -> None:
    """Stop an episode's tool server and remove its container."""
    if episode is None:
        return
    sandbox, session = episode
    try:
        session.close()
    finally:
        sandbox.stop()
