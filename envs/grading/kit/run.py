"""The test command run as the unprivileged test user, its output kept up to a cap, everything it started
killed afterwards, and its report files read back without following a link."""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

from . import trees
from .globs import compile_patterns

OUTPUT_CAP = 32 * 1024 * 1024
"""Bytes of the command's output kept (the rest is read and dropped, with a note)."""
REPORT_CAP = 64 * 1024 * 1024
"""Bytes of one report file read; a larger report is refused (not cut: half a report would mislead)."""
REPORTS_CAP = 256 * 1024 * 1024
REPORT_DIR = "@REPORT_DIR@"
"""In a policy's command and report paths: the run's report folder (the test user's, empty at the start)."""
RUN_DIR = "@RUN_DIR@"
"""In a policy's command and file paths: the run's own folder (root's: plug-ins, the selection)."""


@dataclass
class User:
    name: str
    uid: int
    gid: int


def lookup_user(name: str, passwd: str = "/etc/passwd") -> User:
    """The test user from the container's own /etc/passwd (never the agent's files). Raises KeyError."""
    data = trees.read_bytes(passwd) or b""
    for line in data.decode("utf-8", "replace").splitlines():
        parts = line.split(":")
        if len(parts) >= 4 and parts[0] == name and parts[2].isdigit() and parts[3].isdigit():
            if parts[2] == "0":
                msg = f"the test user {name!r} is root"
                raise KeyError(msg)
            return User(name, int(parts[2]), int(parts[3]))
    msg = f"no user {name!r} in {passwd}"
    raise KeyError(msg)


@dataclass
class Ran:
    exit_code: int
    timed_out: bool
    output: str
    duration_s: float
    cut: bool = False


def _drain(stream, keep: list, state: dict) -> None:
    size = 0
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            return
        if size < OUTPUT_CAP:
            keep.append(chunk[:OUTPUT_CAP - size])
        elif not state.get("cut"):
            state["cut"] = True
        size += len(chunk)


def run_as(user: User, command: str, cwd: str, env: dict, timeout_s: float) -> Ran:
    """`bash -c command` as `user` (no supplementary groups), its output merged; on timeout its process group
    is killed. Every process of the user is killed afterwards, so nothing it left runs on while the grader
    reads the results."""
    started = time.monotonic()
    proc = subprocess.Popen(["/bin/bash", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=lambda: _become(user))
    keep: list = []
    state: dict = {}
    reader = threading.Thread(target=_drain, args=(proc.stdout, keep, state), daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    kill_user(user)
    reader.join(timeout=10)
    output = b"".join(keep).decode("utf-8", "replace")
    return Ran(proc.returncode if proc.returncode is not None else -9, timed_out, output,
               time.monotonic() - started, bool(state.get("cut")))


def _become(user: User) -> None:
    """In the child before exec: the test user, no supplementary groups (Python 3.8 has no `user=`)."""
    os.umask(0o022)
    os.setgroups([])
    os.setgid(user.gid)
    os.setuid(user.uid)


def _processes_of(uid: int) -> list:
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid == uid:
                pids.append(int(name))
        except FileNotFoundError:
            continue
    return pids


def kill_user(user: User, rounds: int = 50) -> None:
    """SIGKILL every process of `user`, from a child that became that user (kill(-1) reaches exactly its
    processes), until none is left."""
    for _ in range(rounds):
        if not _processes_of(user.uid):
            return
        pid = os.fork()
        if pid == 0:  # the child: the user's own, so kill(-1) reaches every process of the user but itself
            try:
                _become(user)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.02)


def read_reports(work: str, patterns: list, report_dir: str) -> tuple:
    """(text, notes): the report files the patterns name (in the report folder: `@REPORT_DIR@/name`; else
    patterns relative to `work`), each under a `==> path <==` header, read with O_NOFOLLOW and capped."""
    notes: list = []
    chunks: list = []
    total = 0
    absolute = [p.replace(REPORT_DIR, report_dir) for p in patterns if p.startswith(REPORT_DIR)]
    relative = tuple(p for p in patterns if not p.startswith(REPORT_DIR))
    paths = list(absolute)
    if relative:
        regex = compile_patterns(relative)
        paths += [os.path.join(work, rel) for rel, e in sorted(trees.walk(work).items())
                  if e.kind == "file" and regex.match(rel)]
    for path in paths:
        data = trees.read_bytes(path, REPORT_CAP)
        if data is None:
            if trees.lstat_entry(path) is not None:
                notes.append(f"{path}: not a regular file, or larger than {REPORT_CAP // (1024 * 1024)} MiB: not read")
            continue
        total += len(data)
        if total > REPORTS_CAP:
            notes.append(f"the reports pass {REPORTS_CAP // (1024 * 1024)} MiB: the rest were not read")
            break
        chunks.append(f"==> {path} <==\n" + data.decode("utf-8", "replace"))
    return "\n".join(chunks), notes
