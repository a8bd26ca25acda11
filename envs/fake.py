"""Fakes for unit tests: FakeSandbox (scripted ExecResults, in-memory files, every call recorded) and
FakeFactory (a SandboxFactory over an in-memory image store; runs nothing, needs no Docker)."""

from __future__ import annotations

import itertools
import json
import re
import shlex
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, Field

from envs.base import DEFAULT_OUTPUT_CAP, LABEL, REPORT_CAP_BYTES, ExecResult
from envs.errors import EnvError, EnvNotStartedError, ImageBuildError, ImageNotFoundError

Answer = ExecResult | int | str | None
Behaviour = Callable[["FakeSandbox", str, dict[str, str]], Answer]
"""Answers a command: (sandbox, command, environment) -> a result, or None to fall through to the rules.
It may change the sandbox's `files` (install state, a JUnit report) as the real command would."""


class FakeCall(BaseModel):
    """One recorded method call."""

    method: str
    args: dict[str, Any] = Field(default_factory=dict)


class FakeStream:
    """A Stream whose replies come from `handler(sent bytes)`; echoes by default."""

    def __init__(self, handler: Callable[[bytes], bytes] | None = None, greeting: bytes = b"") -> None:
        self.handler = handler or (lambda data: data)
        self.sent: list[bytes] = []
        self._replies: deque[bytes] = deque([greeting] if greeting else [])
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

    `exec` answers from the queue first (`push`), then from `behaviour` (unless it returns None), then from
    the first rule whose regex matches the command (`add_rule`; a command list is matched as its shlex.join),
    else `default`. Files live in `files`; `env` is set for every command (behaviour sees it merged).
    A stream starts with `stream_greeting` queued (what a server prints first), then `stream_handler` answers.
    """

    kind = "fake"

    def __init__(
        self,
        rules: Iterable[tuple[str, ExecResult | int | str]] = (),
        queue: Iterable[ExecResult | int | str] = (),
        default: ExecResult | None = None,
        workdir: str = "/workspace",
        stream_handler: Callable[[bytes], bytes] | None = None,
        behaviour: Behaviour | None = None,
        stream_greeting: bytes = b"",
    ) -> None:
        self.workdir = workdir
        self.behaviour = behaviour
        self.stream_greeting = stream_greeting
        self.env: dict[str, str] = {}
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
        if self.behaviour is not None:
            answer = self.behaviour(self, text, {**self.env, **(env or {})})
            if answer is not None:
                return _result(answer)
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

    def read_file(self, path: str, *, limit: int = REPORT_CAP_BYTES) -> bytes:
        """The first `limit` stored bytes; FileNotFoundError when absent."""
        self._record("read_file", path=path, limit=limit)
        try:
            return self.files[self._path(path)][:max(limit, 0)]
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
        return FakeStream(self.stream_handler, self.stream_greeting)


class FakeImage(BaseModel):
    """One image of a FakeFactory: the files a sandbox starts with, and what made them."""

    tag: str
    origin: str  # "base", "snapshot", "finalize" or "build"
    files: dict[str, bytes] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    parent: str | None = None
    dockerfile: str | None = None  # what `build` made it from


class FakeExec(BaseModel):
    """One command run in a sandbox of a FakeFactory, with the network state it ran under."""

    sandbox: int  # index into FakeFactory.sandboxes
    image: str
    network: bool
    command: str
    env: dict[str, str] = Field(default_factory=dict)


class FactorySandbox(FakeSandbox):
    """A FakeSandbox of a FakeFactory: starts from an image's files, snapshots into the factory's store."""

    def __init__(self, factory: FakeFactory, index: int, image: str, *, network: bool,
                 env: Mapping[str, str] | None, cache: bool, trusted: bool = False) -> None:
        super().__init__(behaviour=factory._answer, stream_handler=factory.stream_handler,
                         stream_greeting=factory.stream_greeting)
        self.factory, self.index, self.image, self.cache = factory, index, image, cache
        self.trusted = trusted
        self.network = self.network_at_start = network
        self.sandbox_env = dict(env or {})

    def start(self) -> Self:
        """Load the image's files and environment; ImageNotFoundError when the factory has no such image."""
        image = self.factory.image(self.image)
        self.files, self.env = dict(image.files), {**image.env, **self.sandbox_env}
        return super().start()

    def snapshot(self, label: str) -> str:
        """Store the files as a new image of the factory; returns its id."""
        self._record("snapshot", label=label)
        return self.factory._store(FakeImage(tag=f"fake-snapshot-{next(self.factory._ids)}",
                                             origin="snapshot", files=dict(self.files), env=dict(self.env),
                                             parent=self.image))

    def restore(self, snapshot_id: str) -> None:
        """Bring `files` back to an image of the factory."""
        self._record("restore", snapshot_id=snapshot_id)
        self.files = dict(self.factory.image(snapshot_id).files)


def _instructions(dockerfile: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, comments dropped and continuation lines joined."""
    kept = (ln for ln in dockerfile.splitlines() if not ln.lstrip().startswith("#"))
    text = re.sub(r"\\\n", " ", "\n".join(kept))
    pairs = (ln.strip().partition(" ") for ln in text.splitlines() if ln.strip())
    return [(op.upper(), rest.strip()) for op, _, rest in pairs]


def _run_command(arguments: str) -> str:
    """The command of a RUN: `["bash", "-c", CMD]` gives CMD; other exec forms are shlex-joined."""
    if not arguments.startswith("["):
        return arguments
    argv = json.loads(arguments)
    return argv[2] if argv[:2] == ["bash", "-c"] and len(argv) == 3 else shlex.join(argv)


class FakeFactory:
    """A SandboxFactory that runs nothing: images are file maps in `images`, commands go to `behaviour`.

    Records every sandbox made (`sandboxes`), every command run with its network state (`executed`) and
    every image discarded (`discarded`). `build` replays a Dockerfile: COPY from the context, ENV, and each
    RUN through `behaviour` in a sandbox with the network on; a RUN that fails is an ImageBuildError.
    """

    kind = "fake"

    def __init__(self, behaviour: Behaviour | None = None, *, base_files: Mapping[str, bytes] | None = None,
                 stream_handler: Callable[[bytes], bytes] | None = None,
                 stream_greeting: bytes = b"") -> None:
        self.behaviour = behaviour
        self.base_files = dict(base_files or {})
        self.stream_handler, self.stream_greeting = stream_handler, stream_greeting
        self.images: dict[str, FakeImage] = {}
        self.sandboxes: list[FactorySandbox] = []
        self.executed: list[FakeExec] = []
        self.discarded: list[str] = []
        self._ids = itertools.count(1)

    def _answer(self, sandbox: FakeSandbox, command: str, env: dict[str, str]) -> Answer:
        """Record the command, then ask `behaviour`."""
        assert isinstance(sandbox, FactorySandbox)
        self.executed.append(FakeExec(sandbox=sandbox.index, image=sandbox.image, network=sandbox.network,
                                      command=command, env=env))
        return self.behaviour(sandbox, command, env) if self.behaviour is not None else None

    def _store(self, image: FakeImage) -> str:
        """Keep `image` under its tag; returns the tag."""
        self.images[image.tag] = image
        return image.tag

    def image(self, ref: str) -> FakeImage:
        """The image stored under `ref`; ImageNotFoundError when there is none (or it was discarded)."""
        try:
            return self.images[ref]
        except KeyError:
            msg = f"no fake image {ref!r} (have: {', '.join(self.images) or 'none'})"
            raise ImageNotFoundError(msg) from None

    def base_image(self, python: str, log: Callable[[str], None] | None = None, *,
                   packages: tuple[str, ...] = (), toolchains: tuple[str, ...] = ()) -> str:
        """`fake-base:pythonX.Y` (`-TOOLCHAIN` for each toolchain), holding `base_files`; made on first use."""
        tag = f"fake-base:python{python}" + "".join(f"-{t}" for t in toolchains)
        if tag not in self.images:
            if log is not None:
                log(f"making fake base image {tag}")
            self._store(FakeImage(tag=tag, origin="base", files=dict(self.base_files),
                                  labels={LABEL: "1", "autoinstall.kind": "base"}))
        return tag

    def sandbox(self, image: str, *, network: bool, env: Mapping[str, str] | None = None,
                cache: bool = False, trusted: bool = False) -> FactorySandbox:
        """A new, unstarted FactorySandbox from `image` (its files are loaded at start)."""
        self.sandboxes.append(FactorySandbox(self, len(self.sandboxes), image, network=network, env=env,
                                             cache=cache, trusted=trusted))
        return self.sandboxes[-1]

    def finalize(self, snapshot: str, tag: str, env: Mapping[str, str], labels: Mapping[str, str]) -> str:
        """Store the snapshot's files under `tag` with `env` added and `labels`."""
        parent = self.image(snapshot)
        return self._store(FakeImage(tag=tag, origin="finalize", files=dict(parent.files), parent=snapshot,
                                     env={**parent.env, **env}, labels={LABEL: "1", **labels}))

    def build(self, context: Path, tag: str, labels: Mapping[str, str]) -> str:
        """Replay `context`/Dockerfile (FROM, COPY, ENV, RUN; others ignored) into an image tagged `tag`."""
        path = Path(context) / "Dockerfile"
        dockerfile = path.read_text() if path.is_file() else ""
        steps = _instructions(dockerfile)
        if not steps or steps[0][0] != "FROM":
            msg = f"{path} is missing or does not start with FROM"
            raise ImageBuildError(msg)
        parent = steps[0][1].split()[0]
        sandbox = self.sandbox(parent, network=True).start()
        try:
            for op, arguments in steps[1:]:
                if op == "COPY":
                    src, dest = shlex.split(arguments)[-2:]
                    sandbox.put(Path(context) / src, dest)
                elif op == "ENV":
                    sandbox.env.update(dict(i.partition("=")[::2] for i in shlex.split(arguments)))
                elif op == "RUN" and not (result := sandbox.exec(_run_command(arguments))).ok:
                    msg = f"RUN {_run_command(arguments)} exited {result.exit_code}: {result.output[-500:]}"
                    raise ImageBuildError(msg)
            return self._store(FakeImage(tag=tag, origin="build", files=dict(sandbox.files), parent=parent,
                                         env=dict(sandbox.env), labels={LABEL: "1", **labels},
                                         dockerfile=dockerfile))
        finally:
            sandbox.stop()

    def discard(self, images: Sequence[str]) -> None:
        """Forget `images` (unknown ones are ignored) and record them in `discarded`."""
        for ref in images:
            self.discarded.append(ref)
            self.images.pop(ref, None)
