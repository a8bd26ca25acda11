"""Byte plumbing shared by the sandboxes: capped output buffers and Docker's multiplexed stream frames.

Stdlib only, so both `local.py` and `docker.py` use it without importing the docker SDK.
"""

from __future__ import annotations

import contextlib
import select
import shutil
import socket
import struct
import tarfile
import threading
import time
from pathlib import Path

_HEADER = struct.Struct(">BxxxL")
STDOUT, STDERR = 1, 2


class CappedOutput:
    """Keeps the first and last `cap // 2` bytes of a stream and counts what falls in between, and when the last
    chunk before `until` (a time.monotonic() instant: a command's timeout) came."""

    def __init__(self, cap: int, until: float | None = None) -> None:
        self.tail_cap = max(cap // 2, 0)
        self.head_cap = max(cap - self.tail_cap, 0)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.until = until
        self.last_write: float | None = None
        """When the last non-empty chunk before `until` arrived: what a killed command printed on its way out
        (after its timeout) does not count as it still working."""

    def write(self, data: bytes) -> None:
        """Append a chunk, dropping the middle once past the cap."""
        if data:
            now = time.monotonic()
            if self.until is None or now < self.until:
                self.last_write = now
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_cap + 65536:
                del self.tail[: len(self.tail) - self.tail_cap]

    @property
    def truncated(self) -> bool:
        return self.total > self.head_cap + self.tail_cap

    def text(self) -> str:
        """The kept bytes decoded as UTF-8, with a marker where the middle was dropped."""
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        tail = bytes(self.tail[len(self.tail) - self.tail_cap :]) if self.tail_cap else b""
        omitted = self.total - len(self.head) - len(tail)
        marker = f"\n[... {omitted} bytes omitted by the output cap ...]\n"
        return bytes(self.head).decode("utf-8", "replace") + marker + tail.decode("utf-8", "replace")


class FrameDemuxer:
    """Splits Docker's attach stream into frames (8-byte header: stream id, 3 zeros, big-endian size)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """Add raw bytes; return the complete frames now available as (stream id, payload)."""
        self._buf += data
        frames: list[tuple[int, bytes]] = []
        pos, n = 0, len(self._buf)
        while n - pos >= 8:
            kind, size = _HEADER.unpack_from(self._buf, pos)
            if n - pos - 8 < size:
                break
            frames.append((kind, bytes(self._buf[pos + 8 : pos + 8 + size])))
            pos += 8 + size
        if pos:
            del self._buf[:pos]
        return frames


class SocketStream:
    """A `Stream` over a hijacked Docker exec socket: one writer lock, recv returns stdout payloads."""

    def __init__(self, sock: socket.socket, prefix: bytes = b"", keepalive: object = None) -> None:
        self._sock = sock
        self._keepalive = keepalive
        self._demux = FrameDemuxer()
        self._pending = [p for k, p in self._demux.feed(prefix) if k == STDOUT]
        self._wlock = threading.Lock()
        self._closed = False

    def send(self, data: bytes) -> None:
        """Write bytes to the process's stdin."""
        with self._wlock:
            self._sock.sendall(data)

    def recv(self) -> bytes:
        """Next chunk of stdout; b"" once the process has exited or the stream was closed."""
        while not self._pending:
            try:
                data = self._sock.recv(262144)
            except OSError:
                return b""
            if not data:
                return b""
            self._pending = [p for k, p in self._demux.feed(data) if k == STDOUT and p]
        out = b"".join(self._pending)
        self._pending = []
        return out

    def close(self) -> None:
        """Close stdin and the connection; idempotent."""
        with self._wlock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()


def idle_before(deadline: float, start: float, *signs: float | None) -> float:
    """Seconds between the last sign of work (`signs`: instants, None for none; those outside [start, deadline]
    ignored) and `deadline`; the whole time from `start` when there was none."""
    seen = [t for t in signs if t is not None and start <= t <= deadline]
    return round(deadline - max(seen, default=start), 3)


def pump(sock: socket.socket, prefix: bytes, sinks: dict[int, CappedOutput], deadline: float | None) -> bool:
    """Demultiplex an exec stream into `sinks` until EOF; returns True if `deadline` passed first."""
    demux = FrameDemuxer()
    data = prefix
    while True:
        for kind, payload in demux.feed(data):
            sinks.get(kind, sinks[STDOUT]).write(payload)
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            if not select.select([sock], [], [], remaining)[0]:
                continue
        data = sock.recv(262144)
        if not data:
            return False


def root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Tar filter: files copied into a sandbox belong to root."""
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def move_into(src: Path, dest: Path) -> None:
    """Move `src` to `dest`, merging into `dest` when both are directories."""
    if src.is_dir() and not src.is_symlink() and dest.is_dir():
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
    else:
        if dest.is_dir() and not dest.is_symlink():
            shutil.rmtree(dest)
        src.replace(dest)
