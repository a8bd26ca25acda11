"""The request loop: JSON lines in on stdin (and on the direct channel's socket, when there is one),
each answer sent back where its request came from, served by a thread pool."""
from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from . import PROTOCOL_VERSION, channel
from .files import op_create, op_edit, op_read, op_read_raw
from .grep import op_search
from .lint import op_lint
from .paths import OpError, Workspace
from .reset import op_reset
from .shell import Shells
from .term import kill_group, op_terminal

MAX_WORKERS = 64
PRESTART_WORKERS = 4
EXIT_GRACE_S = 2.0
INLINE_OPS = ("ping", "read")
"""Ops answered on the thread that read the request: a read is bounded (one file, capped output), and
skipping the pool's hand-off saves two thread switches per call."""


class Server:
    """Dispatches requests to a pool that grows when every worker is busy (a hung terminal
    command holds one worker, never the loop) and reuses idle workers (no thread per call)."""

    def __init__(self, root: str, out_fd: int = 1) -> None:
        self.ws = Workspace(root)
        self.out_fd = out_fd
        self.write_lock = threading.Lock()
        self.tasks: queue.SimpleQueue = queue.SimpleQueue()
        self.pool_lock = threading.Lock()
        self.idle = 0
        self.workers = 0
        self.procs: set = set()
        self.shells = Shells()
        self.ops: dict[str, Callable[..., Any]] = {
            "ping": lambda ws: {"pong": True},
            "read": op_read, "read_raw": op_read_raw, "edit": op_edit, "create": op_create,
            "search": op_search, "lint": op_lint,
            "terminal": self._terminal,
            "reset": lambda ws: op_reset(self._stop_own),
        }
        for _ in range(PRESTART_WORKERS):
            self._spawn()

    def _terminal(self, ws: Workspace, persistent: bool = False, **args: Any) -> dict[str, Any]:
        """A command in the persistent shell, or (persistent=False) in a fresh `bash -c` of its own."""
        if persistent:
            return self.shells.run(ws, **args)
        return op_terminal(ws, procs=self.procs, **args)

    def _stop_own(self) -> None:
        """Kill the commands this server runs: fresh terminals' process groups and the persistent shell."""
        for pid in list(self.procs):
            kill_group(pid)
        self.shells.close()

    def _spawn(self, idle: bool = True) -> bool:
        try:
            threading.Thread(target=self._work, daemon=True).start()
        except RuntimeError:  # can't start new thread: out of pids (a fork bomb) or memory
            return False
        with self.pool_lock:
            self.workers += 1
            self.idle += idle
        return True

    def send(self, obj: dict[str, Any], reply: Callable[[bytes], None] | None = None) -> None:
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")
        data += b"\n"
        if reply is not None:
            reply(data)
            return
        with self.write_lock:
            view = memoryview(data)
            while view:
                n = os.write(self.out_fd, view)
                view = view[n:]

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        rid = req.get("id")
        name = req.get("op")
        op = self.ops.get(name) if isinstance(name, str) else None
        if op is None:
            return {"id": rid, "ok": False, "error": "unknown op %r (known: %s)" % (
                req.get("op"), ", ".join(sorted(self.ops)))}
        args = req.get("args") or {}
        if not isinstance(args, dict):
            return {"id": rid, "ok": False, "error": "args must be a JSON object"}
        try:
            return {"id": rid, "ok": True, "result": op(self.ws, **args)}
        except OpError as e:
            return {"id": rid, "ok": False, "error": str(e)}
        except TypeError as e:
            return {"id": rid, "ok": False, "error": "bad arguments for %s: %s" % (req.get("op"), e)}
        except (OSError, RecursionError, MemoryError) as e:
            return {"id": rid, "ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        except Exception as e:  # a bug in an op must not take the server down
            traceback.print_exc(file=sys.stderr)
            return {"id": rid, "ok": False, "error": "internal error: %s: %s" % (type(e).__name__, e)}

    def _work(self) -> None:
        while True:
            req, reply = self.tasks.get()
            try:
                self.send(self.handle(req), reply)
            except Exception:
                traceback.print_exc(file=sys.stderr)
            with self.pool_lock:
                self.idle += 1

    def submit(self, line: bytes, reply: Callable[[bytes], None] | None = None) -> None:
        """Queue one request; its answer goes to `reply` (default: stdout)."""
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request must be a JSON object")
        except ValueError as e:
            self.send({"id": None, "ok": False, "error": "malformed request: %s" % e}, reply)
            return
        if req.get("op") in INLINE_OPS:  # quick and bounded: answered by the reading thread, no hand-off
            self.send(self.handle(req), reply)
            return
        with self.pool_lock:
            reserved = self.idle > 0
            if reserved:
                self.idle -= 1
        self.tasks.put((req, reply))
        # no free worker: add one (if that fails, the request waits for a busy worker to finish)
        if not reserved and self.workers < MAX_WORKERS and not self._spawn(idle=False):
            if self.workers == 0:
                self.send({"id": req.get("id"), "ok": False, "error": "cannot start a worker"}, reply)

    def serve(self, stdin: Any, channel_path: str | None = None) -> None:
        """Answer requests until stdin closes; also over the host's Unix socket at `channel_path` when
        given (the greeting names it when connected, and says nothing of it otherwise)."""
        conn = channel.connect(channel_path) if channel_path else None
        greeting = {"server": "autoinstall-toolserver", "protocol": PROTOCOL_VERSION,
                    "root": self.ws.root, "python": platform.python_version(), "pid": os.getpid()}
        if conn is not None:
            channel.serve(conn, self.submit)
            greeting["socket"] = channel_path
        self.send({"id": 0, "ok": True, "result": greeting})
        for line in iter(stdin.readline, b""):
            if line.strip():
                self.submit(line)
        if conn is not None:
            channel.close(conn)
        # stdin closed: the host is gone. Stop running commands, let quick requests finish.
        for pid in list(self.procs):
            kill_group(pid)
        self.shells.close()
        deadline = time.monotonic() + EXIT_GRACE_S
        while time.monotonic() < deadline and (self.idle < self.workers or not self.tasks.empty()):
            time.sleep(0.01)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="toolserver", description=__doc__)
    parser.add_argument("--root", required=True, help="the workspace; paths are confined to it")
    parser.add_argument("--connect", help="also serve over the host's Unix socket at this path (the direct "
                        "channel)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.root):
        sys.stdout.write(json.dumps({"id": 0, "ok": False, "error": "workspace root %s is not a "
                                     "directory" % args.root}) + "\n")
        sys.exit(2)
    Server(args.root).serve(sys.stdin.buffer, args.connect)
