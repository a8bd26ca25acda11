"""The terminal op: `bash -c command` in its own process group, with a timeout and capped output."""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from typing import Any

from .paths import OpError, Workspace

HEAD_BYTES = TAIL_BYTES = 16 * 1024
DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 3600.0
EXIT_GRACE_S = 0.5
CHUNK = 1 << 16


class _Capture:
    """Keeps the first HEAD_BYTES and the last TAIL_BYTES of a stream, counting the rest."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * TAIL_BYTES:
                del self.tail[:-TAIL_BYTES]

    def text(self) -> str:
        tail = bytes(self.tail[-TAIL_BYTES:])
        dropped = self.total - len(self.head) - len(tail)
        if dropped <= 0:
            return (bytes(self.head) + tail).decode("utf-8", "replace")
        marker = "\n[... %d bytes of output omitted (%d in all); redirect to a file and search or " \
                 "read it to see everything ...]\n" % (dropped, self.total)
        return bytes(self.head).decode("utf-8", "replace") + marker + tail.decode("utf-8", "replace")


def _live_members(pgid: int) -> bool:
    """Whether the group has a member that is not a zombie (/proc; assume yes without it)."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return True
    for pid in pids:
        try:
            with open("/proc/%s/stat" % pid, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def kill_group(pgid: int, proc: subprocess.Popen | None = None) -> None:
    """SIGKILL a process group until no live member is left (a fork bomb keeps adding members)."""
    for attempt in range(400):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        if proc is not None:
            proc.poll()
        if attempt % 4 == 3 and not _live_members(pgid):
            return
        time.sleep(0.005)


def op_terminal(ws: Workspace, command: str, timeout_s: float | None = None,
                cwd: str | None = None, procs: set | None = None) -> dict[str, Any]:
    if not command.strip():
        raise OpError("command is empty")
    workdir = ws.resolve(cwd)
    if not os.path.isdir(workdir):
        raise OpError("cwd %s is not a directory" % cwd)
    timeout = min(max(float(timeout_s or DEFAULT_TIMEOUT_S), 0.1), MAX_TIMEOUT_S)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(["bash", "-c", command], cwd=workdir, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    except OSError as e:
        raise OpError("could not start bash: %s (the sandbox may be out of processes or memory)" % e)
    if procs is not None:
        procs.add(proc.pid)
    try:
        cap, timed_out = _pump(proc, timeout, start)
    finally:
        kill_group(proc.pid, proc)
        proc.wait()
        if procs is not None:
            procs.discard(proc.pid)
    duration = time.monotonic() - start
    code = proc.returncode
    out = cap.text()
    if timed_out:
        out += "\n[command timed out after %g s and was killed; run long jobs in the background " \
               "with output to a file, or raise timeout_s]" % timeout
        code = 124
    return {"output": out, "exit_code": code, "timed_out": timed_out,
            "truncated": cap.total > HEAD_BYTES + TAIL_BYTES, "duration_s": round(duration, 3)}


def _pump(proc: subprocess.Popen, timeout: float, start: float) -> tuple:
    """Read the pipe until EOF, the timeout, or EXIT_GRACE_S after bash exits (background jobs)."""
    cap = _Capture()
    fd = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    exited_at = None
    try:
        while True:
            now = time.monotonic()
            if now - start > timeout:
                return cap, True
            wait = timeout - (now - start)
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None:
                if now - exited_at > EXIT_GRACE_S:
                    return cap, False
                wait = min(wait, EXIT_GRACE_S)
            else:
                wait = min(wait, 1.0)
            if sel.select(wait):
                data = os.read(fd, CHUNK)
                if not data:
                    try:
                        proc.wait(max(0.0, timeout - (time.monotonic() - start)))
                    except subprocess.TimeoutExpired:
                        return cap, True
                    return cap, False
                cap.add(data)
    finally:
        sel.close()
        proc.stdout.close()
