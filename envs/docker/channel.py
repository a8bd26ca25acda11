"""The direct channel of a DockerSandbox: a private host directory bind-mounted read-only into its container.
For each tool session the host listens on a Unix socket there and the tool server inside connects to it,
so tool calls skip dockerd.

Isolation: the directory is made by `tempfile.mkdtemp` (mode 0700, owned by this user, unguessable name)
for one sandbox and mounted into that sandbox's containers only, read-only: what runs in a container can
create nothing there (no files filling the host's disk, no symlinks, no sockets of its own). Connecting
to a socket needs no write access to its directory, so the server can still reach the host's. The host
accepts a connection only from a process of this container (its pid's cgroup names the container) and
removes the socket once it has one: a container never reaches another container's channel, and nothing
outside the container is taken for its server.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from envs.errors import EnvError

CHANNEL_MOUNT = "/run/autoinstall-tools"
"""Where the channel directory appears inside the container."""
_PEERCRED = struct.Struct("3i")
PAUSE_BACKOFF_S = (0.1, 0.3, 1.0, 3.0, 5.0)
"""Waits before pausing again after the engine answered "unable to freeze": the cgroup freezer gives up when
a process keeps changing state (forking, in an uninterruptible read) under load; a moment later it freezes.
On a loaded two-core machine four tries over 1.4 s were not enough once (a Go task's episode in the full test
run, 2026-12-07): the last two waits give it ~10 s in all."""


def make_channel_dir() -> Path:
    """A fresh private directory for one sandbox's channel (0700, unique name)."""
    return Path(tempfile.mkdtemp(prefix="ai-chan-"))


def remove_channel_dir(path: Path | None) -> None:
    """Remove a channel directory and what the container left in it; never raises."""
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def listen_unix(host_dir: Path, name: str) -> socket.socket | None:
    """A socket listening at `host_dir/name`; None when the name is not a plain file name or binding fails."""
    if "/" in name or name in ("", ".", ".."):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(host_dir / name))
        sock.listen(4)
    except OSError:
        sock.close()
        return None
    return sock


def accept_from(listener: socket.socket, container_id: str, timeout: float) -> socket.socket | None:
    """The first connection to `listener` made from inside the container within `timeout` seconds (others
    are closed), or None; the listener is closed and its socket file removed either way."""
    path = listener.getsockname()
    deadline = time.monotonic() + timeout
    try:
        while (left := deadline - time.monotonic()) > 0:
            listener.settimeout(left)
            try:
                conn, _ = listener.accept()
            except OSError:  # timed out, or closed
                return None
            pid = _PEERCRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))[0]
            if _in_container(pid, container_id):
                conn.settimeout(None)
                return conn
            conn.close()
        return None
    finally:
        listener.close()
        with suppress(OSError):
            os.unlink(path)


def _in_container(pid: int, container_id: str) -> bool:
    """Whether `pid` runs in the container (its cgroup path names the container id, v1 and v2 alike)."""
    if pid <= 0 or not container_id:
        return False
    with suppress(OSError):
        return container_id in Path(f"/proc/{pid}/cgroup").read_text()
    return False


class ChannelMixin:
    """The `DirectChannel` half of DockerSandbox (envs/base.py); the sandbox sets `_channel_host`."""

    _channel_host: Path | None = None
    _cid: str | None

    def _open_channel(self, enabled: bool) -> None:
        self._channel_host = make_channel_dir() if enabled else None

    def _close_channel(self) -> None:
        remove_channel_dir(self._channel_host)
        self._channel_host = None

    def channel_dir(self) -> str | None:
        """The channel directory inside the container, when this sandbox has one."""
        return CHANNEL_MOUNT if self._channel_host is not None and self._cid else None

    def listen_channel(self, name: str) -> socket.socket | None:
        """A socket listening at `name` in the channel directory, or None when there is no channel."""
        if self._channel_host is None or not self._cid:
            return None
        return listen_unix(self._channel_host, name)

    def accept_channel(self, listener: socket.socket, timeout: float = 5.0) -> socket.socket | None:
        """The connection this container's server made to `listener`, or None (fall back to the stream)."""
        if not self._cid:
            listener.close()
            return None
        return accept_from(listener, self._cid, timeout)

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """The container's processes frozen (cgroup freezer, as `docker commit` does) while the host reads its
        files: nothing in it can swap a directory for a symlink out of it, or half-write a file, meanwhile."""
        api = self._client.api  # type: ignore[attr-defined]
        for wait in (*PAUSE_BACKOFF_S, None):
            try:
                with self._engine("pause"):  # type: ignore[attr-defined]
                    api.pause(self._cid)
                break
            except EnvError as e:
                if wait is None or "unable to freeze" not in str(e):
                    raise
                time.sleep(wait)
        try:
            yield
        finally:
            with self._engine("unpause"):  # type: ignore[attr-defined]
                api.unpause(self._cid)

    def host_view(self) -> dict[str, Any] | None:
        """The container's file system as this host sees it, for copying files in place of the engine
        (envs/runtime/restore.py): {"upper": its overlay upper dir, "merged": its root, "mounts": what is mounted
        over it (container paths)}; None when the engine is not a local overlay2 one this process can write."""
        client = getattr(self, "_client", None)
        if client is None or not self._cid or os.geteuid() != 0:
            return None
        try:
            info = client.api.inspect_container(self._cid)
        except Exception:  # any engine failure: the caller takes the engine's way instead
            return None
        driver = info.get("GraphDriver") or {}
        data = driver.get("Data") or {}
        upper, merged = data.get("UpperDir"), data.get("MergedDir")
        if driver.get("Name") != "overlay2" or not upper or not merged or not os.path.isdir(merged):
            return None
        host = info.get("HostConfig") or {}
        mounts = [m.get("Destination", "") for m in info.get("Mounts") or []]
        mounts += list(host.get("Tmpfs") or {}) + [CHANNEL_MOUNT]
        return {"upper": upper, "merged": merged, "mounts": [m for m in mounts if m]}
