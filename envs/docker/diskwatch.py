"""Disk limits where the storage driver has no quota (overlay2 on ext4): one poller per engine."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Protocol

from envs.base import Limits
from envs.docker.engine import _ENGINE_ERRORS, connect
from envs.errors import EnvError


class _Config(Protocol):
    base_url: str | None
    limits: Limits


class Watched(Protocol):
    """What the watch needs of a sandbox (a DockerSandbox): its engine and limit, and where to say it was hit."""

    config: _Config
    limit_error: str | None
    committed: int
    """Bytes written by earlier steps, now in the snapshot the container runs from."""
    disk_used: int
    """What the last measure found (-1: not measured since the container was created)."""
    disk_growth: deque[float]
    """When (time.monotonic(), the start of the measure) the last few measures that found more than the one
    before were taken: a running command's sign that it is still working (downloads landing, files unpacked,
    objects compiled). Several, so that a measure after a command's timeout does not hide one before it."""

    @property
    def cache_upper(self) -> Path | None:
        """Host folder holding what the sandbox wrote under /cache (its private overlay layer), if any."""
        ...


def allocated_bytes(root: Path | None) -> int:
    """Disk blocks really used under `root` (sparse files count what they occupy, each inode once; symlinks
    are not followed). What a sandbox writes to a volume costs host disk without showing in SizeRw."""
    if root is None:
        return 0
    total, seen, stack = 0, set(), [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:  # removed meanwhile, or not a directory any more
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


class DiskWatch(threading.Thread):
    """One poller per engine for the writable-layer size of every running sandbox (ext4 has no quota).

    A single listing per interval covers all sandboxes, so 32 sandboxes cost one engine call, not 32.
    """

    _engines: dict[str | None, DiskWatch] = {}
    _lock = threading.Lock()

    def __init__(self, base_url: str | None) -> None:
        super().__init__(name="disk-watch", daemon=True)
        self.base_url = base_url
        self.watched: dict[str, Watched] = {}
        self.wake = threading.Event()

    @classmethod
    def watch(cls, sandbox: Watched, cid: str) -> None:
        """Start watching `cid` for `sandbox` (starts the engine's poller if needed)."""
        with cls._lock:
            poller = cls._engines.get(sandbox.config.base_url)
            if poller is None or not poller.is_alive():
                poller = cls._engines[sandbox.config.base_url] = cls(sandbox.config.base_url)
                poller.watched[cid] = sandbox
                poller.start()
            else:
                poller.watched[cid] = sandbox
            sandbox.disk_used = -1  # a new container: its first measure is the baseline, not growth
            poller.wake.set()  # measure the newcomer on its own schedule, not after someone else's sleep

    @classmethod
    def unwatch(cls, base_url: str | None, cid: str) -> None:
        with cls._lock:
            poller = cls._engines.get(base_url)
            if poller is not None:
                poller.watched.pop(cid, None)

    def _interval(self) -> float:
        with self._lock:
            return min((sb.config.disk_poll_s for sb in self.watched.values()), default=3.0)

    def run(self) -> None:
        """Poll until the engine stops answering; idle (nothing watched) costs nothing but a wait."""
        try:
            client = connect(self.base_url, timeout=300)
        except EnvError:
            return
        try:
            while True:
                with self._lock:
                    watched = dict(self.watched)
                if not watched:
                    self.wake.wait()
                    self.wake.clear()
                    continue
                self.wake.wait(self._interval())
                self.wake.clear()
                with self._lock:
                    watched = dict(self.watched)
                if not watched:
                    continue
                # Sizes only for the watched containers: computing SizeRw walks each writable layer.
                measured = time.monotonic()  # growth is dated to the measure that found it (within one interval)
                rows = client.api.containers(all=True, filters={"id": list(watched)}, size=True)
                # SizeRw is the apparent size: a sparse file counts in full, as `docker commit` writes it.
                sizes = {row["Id"]: int(row.get("SizeRw") or 0) for row in rows}
                for cid, sandbox in watched.items():
                    limit = sandbox.config.limits.disk_mb * 1024 * 1024
                    cache = allocated_bytes(sandbox.cache_upper)
                    used = sizes.get(cid, 0) + sandbox.committed + cache
                    if cid in sizes:
                        if 0 <= sandbox.disk_used < used:
                            sandbox.disk_growth.append(measured)
                        sandbox.disk_used = used
                    if used > limit and cid in self.watched:
                        parts = [f"{sandbox.committed // 2**20} MiB of it in earlier steps" if sandbox.committed
                                 else "", f"{cache // 2**20} MiB under /cache" if cache >= 2**20 else ""]
                        earlier = f" ({', '.join(p for p in parts if p)})" if any(parts) else ""
                        sandbox.limit_error = (
                            f"The sandbox wrote {used // 2**20} MiB to its filesystem{earlier}, over Limits.disk_mb="
                            f"{limit // 2**20}; it was stopped. Raise it (--disk-mb, Limits.disk_mb), or have the "
                            "command write less (e.g. pip --no-cache-dir)."
                        )
                        self.unwatch(self.base_url, cid)
                        client.api.kill(cid)
        except _ENGINE_ERRORS:
            with self._lock:
                self._engines.pop(self.base_url, None)
            return
        finally:
            client.close()
