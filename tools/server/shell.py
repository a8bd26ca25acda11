"""The persistent terminal: one bash for the server's lifetime (one episode), so `cd`, exported
variables, activated venvs and background jobs carry over from one call to the next.

How a call runs: the command goes down bash's stdin as `__ai_call TOKEN $'command' $'cwd'`; bash runs
it with `eval` inside a function (so its state stays in the shell) with stdin from /dev/null, and its
output goes to one pipe that a reader thread drains all the time (a chatty background job never blocks
on a full pipe; what it prints between calls shows up at the start of the next call). When the command
is done bash writes `TOKEN EXIT_CODE` on a second pipe only it holds, which ends the call.

Job control (`set -m`) gives each command line its own process group. On a timeout the server kills
every process group that appeared during the call (never the shell's, never an older background
job's), and signals the shell, whose trap returns from the running command; if the shell still does not
come back (a loop of builtins in nested functions, `exit`), it is killed and the next call starts a new
one, and the output says the state was reset.
"""
from __future__ import annotations

import os
import secrets
import select
import signal
import subprocess
import threading
import time
from typing import Any

from .paths import OpError, Workspace
from .term import DEFAULT_TIMEOUT_S, HEAD_BYTES, MAX_TIMEOUT_S, TAIL_BYTES, _Capture, kill_group

INTERRUPT_GRACE_S = 2.0
BUSY_NOTE = "another terminal command is still running in the shell"
_INIT = r"""set -m
__ai_run() { trap 'return 130' USR1; eval "$1"; }
__ai_call() {
  if [ -n "$3" ]; then cd -- "$3" || { printf '%%s 1\n' "$1" >&%(fd)d; return; }; fi
  __ai_run "$2" </dev/null %(fd)d>&-
  __ai_rc=$?
  trap : USR1
  printf '%%s %%d\n' "$1" "$__ai_rc" >&%(fd)d
}
"""


def ansi_c(text: str) -> str:
    """`text` as a bash $'...' word: every byte survives, nothing in it is interpreted."""
    out = []
    for b in text.encode("utf-8", "surrogateescape"):
        if b in (0x27, 0x5C):
            out.append("\\" + chr(b))
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append("\\x%02x" % b)
    return "$'" + "".join(out) + "'"


def _session_procs(sid: int) -> dict[int, int]:
    """pid -> process group of the live processes of session `sid` (from /proc)."""
    found = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and int(fields[3]) == sid and fields[0] != b"Z":
            found[int(name)] = int(fields[2])
    return found


class _Call:
    def __init__(self, token: str, backlog: bytes) -> None:
        self.token = token
        self.cap = _Capture()
        if backlog:
            self.cap.add(backlog)
        self.done = threading.Event()
        self.code: int | None = None


class Shell:
    """One bash process, its two pipes and the thread that reads them."""

    def __init__(self, root: str) -> None:
        out_r, out_w = os.pipe()
        mark_r, mark_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                ["bash", "--noprofile", "--norc", "-s"], cwd=root, stdin=subprocess.PIPE,
                stdout=out_w, stderr=out_w, pass_fds=(mark_w,), start_new_session=True)
        except OSError as e:
            for fd in (out_r, out_w, mark_r, mark_w):
                os.close(fd)
            raise OpError("could not start bash: %s (the sandbox may be out of processes or memory)" % e)
        os.close(out_w)
        os.close(mark_w)
        self.out_fd, self.mark_fd = out_r, mark_r
        self.lock = threading.Lock()
        self.state = threading.Lock()
        self.call: _Call | None = None
        self.backlog = _Capture()
        self.dead = False
        self._write((_INIT % {"fd": mark_w}).encode())
        threading.Thread(target=self._read, name="shell-reader", daemon=True).start()

    @property
    def alive(self) -> bool:
        return not self.dead and self.proc.poll() is None

    def _write(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (OSError, ValueError):
            self.dead = True

    def _read(self) -> None:
        """Hand output to the running call (or the backlog) and end calls when their token comes."""
        pending = b""
        fds = [self.out_fd, self.mark_fd]
        while True:
            ready = select.select(fds, [], [])[0]
            if self.out_fd in ready and not self._pump_output():
                fds.remove(self.out_fd)
            if self.mark_fd in ready:
                data = os.read(self.mark_fd, 4096)
                if not data:
                    break
                pending += data
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._finish(line)
        while self.out_fd in fds and select.select([self.out_fd], [], [], 0.05)[0] and self._pump_output():
            pass  # what the dying shell printed last
        with self.state:
            self.dead = True
            call, self.call = self.call, None
        if call is not None:
            call.done.set()
        os.close(self.mark_fd)
        if self.out_fd in fds:
            os.close(self.out_fd)

    def _pump_output(self) -> bool:
        data = os.read(self.out_fd, 1 << 16)
        if not data:
            return False
        with self.state:
            (self.call.cap if self.call is not None else self.backlog).add(data)
        return True

    def _finish(self, line: bytes) -> None:
        parts = line.split()
        # what the command already wrote is in the pipe: take it before the call ends
        while select.select([self.out_fd], [], [], 0)[0] and self._pump_output():
            pass
        with self.state:
            call = self.call
            if call is None or len(parts) != 2 or parts[0].decode() != call.token:
                return
            call.code, self.call = int(parts[1]), None
        call.done.set()

    def run(self, command: str, timeout: float, cwd: str | None) -> dict[str, Any]:
        """Run one command line in the shell; see the module docstring."""
        start = time.monotonic()
        if not self.lock.acquire(timeout=timeout):
            raise OpError(BUSY_NOTE + "; wait for it or use a shorter timeout_s")
        try:
            before = _session_procs(self.proc.pid)
            with self.state:
                backlog = self.backlog.text().encode("utf-8") if self.backlog.total else b""
                self.backlog = _Capture()
                call = self.call = _Call(secrets.token_hex(8), backlog)
                if self.dead:  # the shell ended before this call got to it: nothing will answer
                    self.call = None
                    call.done.set()
            self._write(("__ai_call %s %s %s\n" % (call.token, ansi_c(command), ansi_c(cwd or ""))).encode())
            timed_out = not call.done.wait(max(0.0, timeout - (time.monotonic() - start)))
            restarted = timed_out and not self._interrupt(call, before)
        finally:
            self.lock.release()
        return self._result(call, timed_out, restarted, timeout, time.monotonic() - start)

    def _interrupt(self, call: _Call, before: dict[int, int]) -> bool:
        """Stop what the call started; True when the shell came back from it with its state."""
        old_groups = set(before.values())
        deadline = time.monotonic() + INTERRUPT_GRACE_S
        while time.monotonic() < deadline and not call.done.is_set():
            try:
                os.kill(self.proc.pid, signal.SIGUSR1)
            except OSError:
                break
            for pid, pgid in _session_procs(self.proc.pid).items():
                if pid == self.proc.pid or (pgid in old_groups and (pgid != self.proc.pid or pid in before)):
                    continue  # the shell itself, or an earlier call's background job
                if pgid == self.proc.pid:  # a command substitution's child: in the shell's own group
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                else:
                    kill_group(pgid)
            call.done.wait(0.05)
        if call.done.is_set() and call.code is not None:
            return True
        self.close()
        return False

    def _result(self, call: _Call, timed_out: bool, restarted: bool, timeout: float,
                duration: float) -> dict[str, Any]:
        out = call.cap.text()
        code = 124 if timed_out else call.code
        if timed_out:
            out += "\n[command timed out after %g s and was killed; run long jobs in the background " \
                   "with output to a file, or raise timeout_s]" % timeout
        if call.code is None and not timed_out:  # the shell exited during the call (`exit`, set -e)
            try:
                code = self.proc.wait(1)
            except subprocess.TimeoutExpired:
                code = -1
        if restarted or (call.code is None and not timed_out):
            out += "\n[the shell %s; the next command starts a new shell in the workspace root (cd, " \
                   "variables and background jobs are reset)]" % (
                       "did not come back from the interrupt and was killed" if timed_out else "exited")
        return {"output": out, "exit_code": code, "timed_out": timed_out,
                "truncated": call.cap.total > HEAD_BYTES + TAIL_BYTES, "duration_s": round(duration, 3),
                "shell_restarted": bool(restarted or call.code is None)}

    def close(self) -> None:
        """Kill the shell and everything in its session."""
        self.dead = True
        kill_group(self.proc.pid)
        # Job control gives each background job a group of its own, and a fork bomb keeps making new ones while
        # the ones seen are killed: look again until the session is empty (bounded, as kill_group is).
        for _ in range(200):
            groups = set(_session_procs(self.proc.pid).values())
            if not groups:
                break
            for pgid in groups:
                kill_group(pgid)
        try:
            self.proc.wait(1)
        except subprocess.TimeoutExpired:
            pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass


class Shells:
    """The server's one persistent shell, started on first use and again after it died."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.shell: Shell | None = None

    def run(self, ws: Workspace, command: str, timeout_s: float | None = None,
            cwd: str | None = None) -> dict[str, Any]:
        if not command.strip():
            raise OpError("command is empty")
        workdir = ws.resolve(cwd) if cwd else None
        if workdir is not None and not os.path.isdir(workdir):
            raise OpError("cwd %s is not a directory" % cwd)
        timeout = min(max(float(timeout_s or DEFAULT_TIMEOUT_S), 0.1), MAX_TIMEOUT_S)
        with self.lock:
            if self.shell is None or not self.shell.alive:
                if self.shell is not None:
                    self.shell.close()
                self.shell = Shell(ws.root)
            shell = self.shell
        return shell.run(command, timeout, workdir)

    def close(self) -> None:
        with self.lock:
            if self.shell is not None:
                self.shell.close()
