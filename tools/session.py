"""ToolSession: deploys the tool server into a sandbox once and calls it over one stream.

`call()` is thread-safe: each request gets an id, one reader thread hands every answer to the
caller waiting for that id, and a dead server or a silent one fails calls instead of hanging them.

The fast path: when the sandbox is a `DirectChannel` (envs/base.py), the host listens on a Unix socket in
the sandbox's channel directory, the server connects to it from inside, and calls go over that socket,
skipping the container engine; the exec stream stays open beside it (closing it stops the server) and
is the fallback whenever the socket cannot be made or reached (`transport` says which one is in use).
"""
from __future__ import annotations

import hashlib
import io
import itertools
import json
import secrets
import socket
import sys
import threading
import zipfile
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, Self

from envs.base import DirectChannel, Sandbox, Stream
from envs.errors import UserFacingError
from tools.base import ToolError

SERVER_DIR = Path(__file__).parent / "server"
PACKAGE = "autoinstall_toolserver"
DEFAULT_CALL_TIMEOUT_S = 60.0
START_TIMEOUT_S = 30.0
DEPLOY_DIR = "/tmp"
_ZIPAPP: tuple[bytes, str] | None = None
BOOTSTRAP = """\
import os, runpy, sys
path, root = sys.argv[1], sys.argv[2]
if not os.path.exists(path):
    sys.stdout.write('{"id": 0, "ok": true, "result": {"need": "zipapp"}}\\n')
    sys.stdout.flush()
    size = int(sys.stdin.buffer.readline())
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(sys.stdin.buffer.read(size))
    os.replace(tmp, path)
sys.argv = [path, "--root", root] + sys.argv[3:]
runpy.run_path(path, run_name="__main__")
"""
"""Runs in the sandbox's python3: receives the zipapp over the stream when it is not there yet
(one round trip instead of a write_file, which cannot reach a tmpfs /tmp in Docker), then runs it."""
_ZIPAPP_LOCK = threading.Lock()


class ToolServerError(UserFacingError, RuntimeError):
    """The tools' error root: the tool server is not running or did not answer in time (infrastructure, not
    the model)."""


class ToolServerTimeout(ToolServerError, TimeoutError):
    """A call got no answer within its timeout."""


def zipapp_bytes() -> tuple[bytes, str]:
    """The server as a zipapp (deterministic bytes) and a short hash of them; built once."""
    global _ZIPAPP
    with _ZIPAPP_LOCK:
        if _ZIPAPP is None:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
                main = f"from {PACKAGE}.main import main\nmain()\n"
                z.writestr(zipfile.ZipInfo("__main__.py", (1980, 1, 1, 0, 0, 0)), main)
                for src in sorted(SERVER_DIR.glob("*.py")):
                    info = zipfile.ZipInfo(f"{PACKAGE}/{src.name}", (1980, 1, 1, 0, 0, 0))
                    z.writestr(info, src.read_bytes(), zipfile.ZIP_DEFLATED)
            data = buf.getvalue()
            _ZIPAPP = (data, hashlib.sha256(data).hexdigest()[:16])
        return _ZIPAPP


class UnixStream:
    """A `Stream` over a connected Unix socket (the direct channel)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._wlock = threading.Lock()

    def send(self, data: bytes) -> None:
        with self._wlock:
            self._sock.sendall(data)

    def recv(self) -> bytes:
        try:
            return self._sock.recv(262144)
        except OSError:
            return b""

    def close(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


class ToolSession:
    """One running tool server in one sandbox. Use as `with ToolSession(sandbox) as s:`."""

    def __init__(self, sandbox: Sandbox, *, call_timeout: float = DEFAULT_CALL_TIMEOUT_S,
                 start_timeout: float = START_TIMEOUT_S, direct: bool = True,
                 terminal: str = "persistent") -> None:
        """Args:
            sandbox: a started sandbox.
            call_timeout: seconds a call waits for its answer by default.
            start_timeout: seconds to wait for the server's greeting.
            direct: use the sandbox's direct channel when it has one (False: the exec stream only).
            terminal: "persistent" (one shell for the session: cd, variables, jobs carry over) or
                "fresh" (a new shell per command).
        """
        if terminal not in ("persistent", "fresh"):
            raise ValueError(f"terminal must be 'persistent' or 'fresh', not {terminal!r}")
        self.sandbox = sandbox
        self.call_timeout = call_timeout
        self.start_timeout = start_timeout
        self.direct = direct
        self.terminal = terminal
        self.transport = "stream"
        """"socket" when calls go over the direct channel, "stream" over the exec stream."""
        self.info: dict[str, Any] = {}
        self._stream: Stream | None = None
        self._calls: Stream | None = None
        """Where requests are written: the direct channel's socket, else the exec stream."""
        self._reader: threading.Thread | None = None
        self._direct_reader: threading.Thread | None = None
        self._pending: dict[int, Future] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._dead: str | None = "not started"

    def start(self) -> Self:
        """Start the server (deploying it first if the sandbox lacks it) and wait for its greeting."""
        if self.alive:
            return self
        data, digest = zipapp_bytes()
        python = sys.executable if self.sandbox.kind == "local" else "python3"
        argv = [python, "-I", "-c", BOOTSTRAP, f"{DEPLOY_DIR}/autoinstall-toolserver-{digest}.pyz",
                self.sandbox.workdir]
        listener = None
        if self.direct and isinstance(self.sandbox, DirectChannel) and (channel := self.sandbox.channel_dir()):
            name = f"tools-{secrets.token_hex(8)}.sock"
            if (listener := self.sandbox.listen_channel(name)) is not None:
                argv += ["--connect", f"{channel}/{name}"]
        self._dead = None
        greeted: Future[Any] = Future()
        self._pending = {0: greeted}
        try:
            self._stream = self.sandbox.open_stream(argv)
            self._reader = threading.Thread(target=self._read_loop, args=(self._stream,),
                                            name="toolserver-reader", daemon=True)
            self._reader.start()
            greeting = self._greeting(greeted)
            if greeting.get("need") == "zipapp":  # a fresh sandbox: send the zipapp down the stream
                greeted = Future()
                with self._lock:
                    self._pending[0] = greeted
                self._stream.send(b"%d\n" % len(data) + data)
                greeting = self._greeting(greeted)
        except BaseException:
            if listener is not None:
                self.sandbox.accept_channel(listener, 0)  # type: ignore[attr-defined]  # closes and removes it
            raise
        self.info = greeting
        self._calls = self._stream
        self.transport = "stream"
        if listener is not None:
            self._use_channel(listener, connected=bool(greeting.get("socket")))
        return self

    def _use_channel(self, listener: socket.socket, *, connected: bool) -> None:
        """Switch calls to the direct channel when the server connected to it from inside the sandbox; stay on
        the stream otherwise."""
        sock = self.sandbox.accept_channel(listener, 5.0 if connected else 0)  # type: ignore[attr-defined]
        if sock is None:
            return
        direct = UnixStream(sock)
        self._direct_reader = threading.Thread(target=self._read_loop, args=(direct,),
                                               name="toolserver-direct-reader", daemon=True)
        self._direct_reader.start()
        self._calls, self.transport = direct, "socket"

    def _greeting(self, greeted: Future[Any]) -> dict[str, Any]:
        """Wait on the greeting's own Future: the reader drops it from `_pending` as soon as it arrives."""
        try:
            return greeted.result(timeout=self.start_timeout)
        except FutureTimeout as e:
            self.close()
            msg = f"the tool server sent no greeting within {self.start_timeout} s"
            raise ToolServerTimeout(msg) from e
        except (ToolError, ToolServerError) as e:
            self.close()
            msg = (f"the tool server did not start in the {self.sandbox.kind} sandbox ({e}); it needs "
                   "python3 >= 3.8 on PATH and a writable /tmp")
            raise ToolServerError(msg) from e

    def _read_loop(self, stream: Stream) -> None:
        buf = b""
        reason = "the tool server exited"
        try:
            while chunk := stream.recv():
                buf += chunk
                if b"\n" not in chunk:
                    continue
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self._dispatch(line)
        except Exception as e:  # a broken socket is a dead server, reported to the callers
            reason = f"the stream to the tool server broke: {type(e).__name__}: {e}"
        self._fail_all(reason)

    def _dispatch(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return  # not ours (e.g. something the interpreter printed); ignore
        with self._lock:
            fut = self._pending.pop(msg.get("id"), None) if isinstance(msg, dict) else None
        if fut is None:
            return
        if msg.get("ok"):
            fut.set_result(msg.get("result"))
        else:
            fut.set_exception(ToolError(str(msg.get("error"))))

    def _fail_all(self, reason: str) -> None:
        with self._lock:
            if self._dead is None:
                self._dead = reason
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(ToolServerError(reason))

    @property
    def alive(self) -> bool:
        return self._dead is None

    def call(self, op: str, /, *, call_timeout: float | None = None, **args: Any) -> Any:
        """Run one op in the server and return its result.

        Args:
            op: the server op ("read", "edit", "create", "search", "lint", "terminal", "read_raw").
            call_timeout: seconds to wait for the answer (default: the session's call_timeout).
            **args: the op's arguments (JSON-serializable).

        Returns:
            The op's result (a dict).

        Raises:
            ToolError: the op failed in a way the model can act on (missing file, bad regex, ...).
            ToolServerError: the server is gone or did not answer within the timeout.
        """
        fut: Future = Future()
        with self._lock:
            if self._dead is not None:
                raise ToolServerError(f"the tool server is not running ({self._dead})")
            rid = next(self._ids)
            self._pending[rid] = fut
        line = json.dumps({"id": rid, "op": op, "args": args}, separators=(",", ":")) + "\n"
        try:
            self._calls.send(line.encode())  # type: ignore[union-attr]
        except OSError as e:
            self._fail_all(f"cannot write to the tool server: {e}")
        timeout = self.call_timeout if call_timeout is None else call_timeout
        try:
            return fut.result(timeout=timeout)
        except FutureTimeout as e:
            with self._lock:
                self._pending.pop(rid, None)
            raise ToolServerTimeout(f"the tool server did not answer {op!r} within {timeout} s") from e

    def close(self) -> None:
        """Stop the server (it exits when its stdin closes). Idempotent."""
        for stream in {id(s): s for s in (self._calls, self._stream) if s is not None}.values():
            stream.close()
        self._fail_all("the session was closed")
        for reader in (self._reader, self._direct_reader):
            if reader is not None and reader is not threading.current_thread():
                reader.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
