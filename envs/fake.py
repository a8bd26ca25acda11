"""FakeSandbox: scripted ExecResults and an in-memory filesystem, recording every call; for unit tests."""

from __future__ import annotations

import re
import shlex
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, Field

from envs.base import DEFAULT_OUTPUT_CAP, ExecResult
from envs.errors import EnvError, EnvNotStartedError


class FakeCall(BaseModel):
    """One recorded method call."""

    method: str
    args: dict[str, Any] = Field(default_factory=dict)


class FakeStream:
    """A Stream whose replies come from `handler(sent bytes)`; echoes by default."""

    def __init__(self, handler: Callable[[bytes], bytes] | None = None) -> None:
        self.handler = handler or (lambda data: data)
        self.sent: list[bytes] = []
        self._replies: deque[bytes] = deque()
        self._ready = threading.Condition()
        self._closed = False

    def send(self, data: bytes) -> None:
        """Record `data` and queue the handler's reply."""
        with self._ready:
            if self._closed:
                msg = "send on a closed stream"
                raise BrokenPipeError(msg)
            self.sent.append(data)
            reply = self.handler(data)
            if reply:
                self._replies.append(reply)
            self._ready.notify_all()

    def recv(self) -> bytes:
        """Next reply; b"" once closed and drained."""
        with self._ready:
            self._ready.wait_for(lambda: self._replies or self._closed)
            return self._replies.popleft() if self._replies else b""

    def close(self) -> None:
        """End the stream; pending recv calls return b""."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()


def _result(value: ExecResult | int | str) -> ExecResult:
    if isinstance(value, ExecResult):
        return value
    if isinstance(value, int):
        return ExecResult(exit_code=value)
    return ExecResult(exit_code=0, stdout=value)


class FakeSandbox:
    """A Sandbox that runs nothing.

    `exec` answers from the queue first (`push`), then from the first rule whose regex matches the command
    (`add_rule`; a command list is matched as its shlex.join), else `default`. Files live in `files`.
    """

    kind = "fake"

    def __init__(
        self,
        rules: Iterable[tuple[str, ExecResult | int | str]] = (),
        queue: Iterable[ExecResult | int | str] = (),
        default: ExecResult | None = None,
        workdir: str = "/workspace",
        stream_handler: Callable[[bytes], bytes] | None = None,
    ) -> None:
        self.workdir = workdir
        self.rules = [(re.compile(p), _result(r)) for p, r in rules]
        self.queue: deque[ExecResult] = deque(_result(r) for r in queue)
        self.default = default or ExecResult(exit_code=0)
        self.stream_handler = stream_handler
        self.calls: list[FakeCall] = []
        self.files: dict[str, bytes] = {}
        self.network = True
        self.snapshots: dict[str, dict[str, bytes]] = {}
        self.started = False

    def add_rule(self, pattern: str, result: ExecResult | int | str) -> None:
        """Answer commands matching `pattern` (re.search) with `result`."""
        self.rules.append((re.compile(pattern), _result(result)))

    def push(self, result: ExecResult | int | str) -> None:
        """Queue a result for the next exec, whatever its command."""
        self.queue.append(_result(result))

    def commands(self) -> list[str]:
        """The commands passed to exec so far, as strings."""
        return [c.args["cmd"] for c in self.calls if c.method == "exec"]

    def _record(self, method: str, **args: Any) -> None:
        self.calls.append(FakeCall(method=method, args=args))
        if not self.started and method not in ("start", "stop"):
            msg = f"FakeSandbox.{method} called before start()"
            raise EnvNotStartedError(msg)

    def _path(self, path: str) -> str:
        return str(Path(self.workdir, path))

    def start(self) -> Self:
        """Mark started."""
        self._record("start")
        self.started = True
        return self

    def stop(self) -> None:
        """Mark stopped."""
        self._record("stop")
        self.started = False

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
    ) -> ExecResult:
        """Return the scripted result for `cmd`."""
        text = cmd if isinstance(cmd, str) else shlex.join(cmd)
        self._record("exec", cmd=text, cwd=cwd, env=dict(env or {}), timeout=timeout)
        if self.queue:
            return self.queue.popleft().model_copy()
        for pattern, result in self.rules:
            if pattern.search(text):
                return result.model_copy()
        return self.default.model_copy()

    def put(self, src: Path, dest: str) -> None:
        """Load host files into `files`."""
        self._record("put", src=str(src), dest=dest)
        src = Path(src)
        paths = [src] if src.is_file() else [p for p in sorted(src.rglob("*")) if p.is_file()]
        for p in paths:
            rel = "" if p == src else "/" + p.relative_to(src).as_posix()
            self.files[self._path(dest) + rel] = p.read_bytes()

    def get(self, src: str, dest: Path) -> None:
        """Write `files` under `src` to the host path `dest`."""
        self._record("get", src=src, dest=str(dest))
        root = self._path(src)
        found = {k: v for k, v in self.files.items() if k == root or k.startswith(root + "/")}
        if not found:
            raise FileNotFoundError(root)
        for key, data in found.items():
            target = Path(dest) / key[len(root) + 1 :] if key != root else Path(dest)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def write_file(self, path: str, data: bytes) -> None:
        """Store bytes."""
        self._record("write_file", path=path, size=len(data))
        self.files[self._path(path)] = bytes(data)

    def read_file(self, path: str) -> bytes:
        """Stored bytes; FileNotFoundError when absent."""
        self._record("read_file", path=path)
        try:
            return self.files[self._path(path)]
        except KeyError:
            raise FileNotFoundError(self._path(path)) from None

    def snapshot(self, label: str) -> str:
        """Copy `files`; returns "fake-N"."""
        self._record("snapshot", label=label)
        snap_id = f"fake-{len(self.snapshots)}"
        self.snapshots[snap_id] = dict(self.files)
        return snap_id

    def restore(self, snapshot_id: str) -> None:
        """Bring `files` back to the snapshot."""
        self._record("restore", snapshot_id=snapshot_id)
        if snapshot_id not in self.snapshots:
            msg = f"Unknown snapshot {snapshot_id!r}"
            raise EnvError(msg)
        self.files = dict(self.snapshots[snapshot_id])

    def set_network(self, enabled: bool) -> None:
        """Record the switch."""
        self._record("set_network", enabled=enabled)
        self.network = enabled

    def open_stream(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> FakeStream:
        """A FakeStream using `stream_handler`."""
        self._record("open_stream", argv=list(argv), env=dict(env or {}))
        return FakeStream(self.stream_handler)
