"""The `reset` op: the container's processes and scratch space back to how a fresh container has them, so the
host can restore its file system in place (envs/runtime/restore.py) instead of starting a new container.

Kills every process but the container's init, its `sleep infinity` and this server (background jobs, daemons,
the persistent shell and what it started), empties /tmp (but the server's own zipapp) and /dev/shm and gives them
back the owner and mode they had when the server started, and removes the SysV IPC objects (shared memory,
semaphores, message queues: `ipcs`) processes left in the container's IPC namespace.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

KILL_ROUNDS_S = 2.0
SCRATCH = ("/tmp", "/dev/shm")
KEEP_PREFIX = "autoinstall-toolserver-"
"""What stays in /tmp: the deployed server (its zipapp), so the next start needs no upload."""
SYSV = (("shm", "shmctl"), ("sem", "semctl"), ("msg", "msgctl"))
"""/proc/sysvipc/<kind> lists the objects; libc's <call>(id, IPC_RMID, ...) removes one."""
IPC_RMID = 0


def _owner_modes() -> dict[str, tuple[int, int, int]]:
    """(uid, gid, mode) of each scratch directory."""
    found = {}
    for top in SCRATCH:
        try:
            st = os.stat(top)
        except OSError:
            continue
        found[top] = (st.st_uid, st.st_gid, st.st_mode & 0o7777)
    return found


SCRATCH_OWNER_MODE = _owner_modes()
"""As the server found them (it starts before any command of an episode): what a reset gives back."""


def _stat(pid: str) -> tuple[int, bytes] | None:
    """(parent pid, state) of a process, None when it is gone."""
    try:
        with open("/proc/%s/stat" % pid, "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), fields[0]
    except (OSError, IndexError, ValueError):
        return None


def _cmdline(pid: str) -> bytes:
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _keep() -> set[int]:
    """pid 1 (the init), its first `sleep infinity` (what keeps the container up) and this server."""
    keep = {1, os.getpid()}
    sleepers = [int(p) for p in os.listdir("/proc") if p.isdigit() and (_stat(p) or (0,))[0] == 1
                and _cmdline(p) == b"sleep\0infinity\0"]
    if sleepers:
        keep.add(min(sleepers))
    return keep


def kill_others() -> int:
    """SIGKILL every process not kept, in rounds until none is left (a fork loop refills); how many remain."""
    keep = _keep()
    left: list[int] = []
    deadline = time.monotonic() + KILL_ROUNDS_S
    while True:
        left = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in keep:
                continue
            st = _stat(name)
            if st is None or st[1] == b"Z":  # gone, or a zombie its parent (the init) reaps
                continue
            left.append(int(name))
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.002)
    return len(left)


def empty_scratch() -> int:
    """Remove what /tmp and /dev/shm hold (but the server's zipapp); how many entries could not be removed."""
    failed = 0
    for top in SCRATCH:
        try:
            names = os.listdir(top)
        except OSError:
            continue
        for name in names:
            if top == "/tmp" and name.startswith(KEEP_PREFIX) and name.endswith(".pyz"):
                continue
            path = os.path.join(top, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                failed += 1
        if top in SCRATCH_OWNER_MODE and _owner_modes().get(top) != SCRATCH_OWNER_MODE[top]:
            uid, gid, mode = SCRATCH_OWNER_MODE[top]  # only when changed: a server not run as root may not chown
            try:
                os.chown(top, uid, gid)
                os.chmod(top, mode)
            except OSError:
                failed += 1
    return failed


def _sysv_ids() -> list[tuple[str, int]]:
    """(the libc call that removes it, its id) of every SysV IPC object in this IPC namespace."""
    found = []
    for kind, call in SYSV:
        try:
            with open("/proc/sysvipc/%s" % kind, "rb") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        found += [(call, int(row.split()[1])) for row in rows if len(row.split()) > 1]
    return found


def remove_sysv_ipc() -> int:
    """Remove the SysV shared memory segments, semaphore sets and message queues; how many are left."""
    objects = _sysv_ids()
    if not objects:
        return 0
    try:
        import ctypes  # reason: only when there is something to remove (rare), and the server stays stdlib-only

        libc = ctypes.CDLL(None, use_errno=True)
        for call, ident in objects:
            if call == "semctl":
                libc.semctl(ident, 0, IPC_RMID)
            else:
                getattr(libc, call)(ident, IPC_RMID, None)
    except (ImportError, OSError, AttributeError):  # no ctypes or no libc: util-linux's ipcrm, when there
        try:
            subprocess.run(["ipcrm", "--all"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
        except (OSError, subprocess.SubprocessError):
            pass
    return len(_sysv_ids())


def op_reset(stop_own: Callable[[], None]) -> dict[str, Any]:
    """Stop the server's own commands (`stop_own`: the shell and fresh terminals), kill every other process,
    empty the scratch space, remove SysV IPC objects. `left`, `scratch_left` or `ipc_left` > 0: the container
    could not be cleaned (start a new one instead)."""
    start = time.monotonic()
    stop_own()
    left = kill_others()
    time.sleep(0.001)  # let the init reap what was killed before /proc is read again
    left = kill_others() if left else 0
    return {"left": left, "scratch_left": empty_scratch(), "ipc_left": remove_sysv_ipc(),
            "duration_s": round(time.monotonic() - start, 4)}
