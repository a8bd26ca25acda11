"""The sandbox interface every environment implements, and the data it returns.

`autoinstall/` and `tools/` depend only on this module; `envs/docker/` and `envs/local.py`
implement it. A failing command is a result (`ExecResult`), not an exception; infrastructure
failures raise from `envs/errors.py`.
"""
from __future__ import annotations

import socket
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, Self, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_OUTPUT_CAP = 1024 * 1024
"""Bytes kept per stream by `exec` by default (head and tail are kept, the middle is dropped)."""
REPORT_CAP_BYTES = 32 * 1024 * 1024
"""Bytes of one file the host reads from a sandbox at most (a JUnit report, a coverage map, a log): the
default `limit` of `read_file`. Whatever the sandbox's code wrote past it is never fetched (a 600 MB sparse
report costs the host this much memory and no disk); `read_capped` says when a file was cut."""

LABEL = "autoinstall"
"""Label put on every container and image we create; `autoinstall cleanup` looks for it."""


class ExecResult(BaseModel):
    """The outcome of one command."""

    exit_code: int
    """The command's exit status; 124 when it timed out, -1 when it could not be started."""
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    timed_out: bool = False
    truncated: bool = False
    """True when stdout or stderr went past the output cap and the middle was dropped."""
    idle_s: float | None = None
    """For a command that timed out: how long before its timeout it last showed it was working (printed
    something, or, in a Docker sandbox, grew its files by the disk watch's measure, /cache included); the
    whole timeout when it never did. None when the sandbox cannot tell (or the command did not time out)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def output(self) -> str:
        """stdout and stderr together, for diagnosis and logs."""
        return self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr


class Limits(BaseModel):
    """Resource limits applied to a sandbox."""

    model_config = ConfigDict(extra="forbid")
    cpus: float = 2.0
    """CPU cores the sandbox may use."""
    memory_mb: int = 4096
    """Memory cap in MiB (swap included)."""
    pids: int = 1024
    """Maximum number of processes/threads; stops fork bombs."""
    disk_mb: int = 10240
    """Cap on what the sandbox may write to its own filesystem, in MiB."""


class Stream(Protocol):
    """A persistent bidirectional byte stream to one process in a sandbox (its stdin/stdout)."""

    def send(self, data: bytes) -> None: ...

    def recv(self) -> bytes:
        """Next chunk of the process's stdout; b"" once the process has exited."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Sandbox(Protocol):
    """Where commands run. Use as a context manager: `with DockerSandbox(...) as sb: sb.exec(...)`.

    Paths given to methods are paths inside the sandbox; relative ones are taken from `workdir`.
    """

    kind: str
    """Short name: "docker", "local", "fake"."""
    workdir: str
    """Absolute path of the workspace inside the sandbox (the repository lives here)."""

    def start(self) -> Self:
        """Create the sandbox. Raises EnvError subclasses when the backend is unavailable."""
        ...

    def stop(self) -> None:
        """Destroy the sandbox and everything in it that was not snapshotted. Idempotent."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...

    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
    ) -> ExecResult:
        """Run a command to completion.

        Args:
            cmd: an argv list (no shell), or a string run by `bash -c`.
            cwd: working directory inside the sandbox (default: workdir).
            env: extra environment variables.
            timeout: seconds; on expiry the whole process group is killed and `timed_out` is set.
            output_cap: bytes kept per stream; past it head and tail are kept and `truncated` is set.

        Returns:
            The ExecResult. A non-zero exit is a result, never an exception.

        Raises:
            EnvNotStartedError: the sandbox is not running.
            EnvError: the backend failed (engine gone, container vanished).
        """
        ...

    def put(self, src: Path, dest: str) -> None:
        """Copy a host file or directory into the sandbox at `dest` (created if missing)."""
        ...

    def get(self, src: str, dest: Path) -> None:
        """Copy a file or directory out of the sandbox to the host path `dest`. Not capped: what the sandbox's
        code wrote (reports, logs, outputs) is read with `read_file`, which is. A sandbox that is not this host
        leaves out links whose target leaves `dest`, FIFOs and devices."""
        ...

    def write_file(self, path: str, data: bytes) -> None: ...

    def read_file(self, path: str, *, limit: int = REPORT_CAP_BYTES) -> bytes:
        """The bytes of a file in the sandbox: all of them, or the first `limit` of a longer one.

        At most `limit` bytes are held on the host, and about that much fetched from the sandbox, however big
        the file (a sparse one included). A file exactly `limit` long cannot be told from a longer one: ask
        for one byte more, as `read_capped` does, to know whether it was cut.

        Args:
            path: the file, inside the sandbox.
            limit: bytes returned at most (default REPORT_CAP_BYTES).

        Returns:
            The file's first `limit` bytes.

        Raises:
            FileNotFoundError: `path` does not exist, or is not a regular file (a link, a FIFO, a device).
            IsADirectoryError: `path` is a directory.
            EnvError: the backend failed.
        """
        ...

    def snapshot(self, label: str) -> str:
        """Save the sandbox's current filesystem state; returns an id for `restore` (Docker: an image id)."""
        ...

    def restore(self, snapshot_id: str) -> None:
        """Return the sandbox to a snapshot. Running processes and open streams end."""
        ...

    def set_network(self, enabled: bool) -> None:
        """Turn network access on (installing) or off (verifying)."""
        ...

    def open_stream(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> Stream:
        """Start a long-lived process and return a stream to its stdin/stdout (stderr is discarded)."""
        ...


def read_capped(sandbox: Sandbox, path: str, cap: int = REPORT_CAP_BYTES) -> tuple[bytes, str]:
    """The first `cap` bytes of a file in `sandbox`, and a note saying it was cut there ("" when it was read
    whole): what a caller parsing a report keeps in its log. Raises as `Sandbox.read_file`."""
    data = sandbox.read_file(path, limit=cap + 1)
    if len(data) <= cap:
        return data, ""
    return data[:cap], f"{path} was cut at {cap} bytes (the host reads no more of a file)"


@runtime_checkable
class ProcessLimit(Protocol):
    """A sandbox whose host can read how many forks its process limit refused, without a command inside."""

    def forks_refused(self) -> int | None:
        """The count so far; None when this host cannot read it (ask inside the sandbox instead)."""
        ...


@runtime_checkable
class Layered(Protocol):
    """A sandbox whose snapshots can stack as layers, as a Dockerfile's steps do."""

    def snapshot_and_continue(self, label: str) -> str:
        """`snapshot`, then go on from it as `restore` would, so that the next snapshot saves only what changed
        since this one (not everything since the start, again). Running processes, open streams and the scratch
        space (/tmp) end here, as between a Dockerfile's steps. Returns the snapshot's id."""
        ...


@runtime_checkable
class Changes(Protocol):
    """A sandbox whose host lists what its own root filesystem changed since it started (a container's writable
    layer), with no walk of the filesystem inside it."""

    def changes(self) -> list[tuple[str, str]] | None:
        """(kind, path) for each path of the root filesystem added ("A"), changed ("C": content, metadata, a folder's
        entries) or deleted ("D") since the sandbox started from its image; what mounts hold (a tmpfs, a bind) is
        not in it. None when it cannot tell."""
        ...


@runtime_checkable
class DirectChannel(Protocol):
    """A sandbox that shares a private directory with the host (read-only inside), so a server inside it can
    connect to a Unix socket the host listens on: the tool server's fast path, past the exec stream."""

    def channel_dir(self) -> str | None:
        """The directory, as a path inside the sandbox; None when this sandbox has no channel."""
        ...

    def listen_channel(self, name: str) -> socket.socket | None:
        """A socket listening at `name` in the channel directory; None when there is no channel."""
        ...

    def accept_channel(self, listener: socket.socket, timeout: float = 5.0) -> socket.socket | None:
        """The first connection to `listener` made from inside this sandbox (others are refused), or None
        within `timeout`; closes the listener and removes its socket file either way."""
        ...


class SandboxSpec(BaseModel):
    """What to start: the common part of every sandbox configuration."""

    model_config = ConfigDict(extra="forbid")
    image: str | None = None
    """Image to start from (Docker); ignored by the local sandbox."""
    limits: Limits = Field(default_factory=Limits)
    network: bool = True
    """Network on at start."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables set for every command."""


@runtime_checkable
class SandboxFactory(Protocol):
    """Starts sandboxes from images and keeps the images they leave: what the builder programs to.

    `envs.docker.DockerFactory` is the real one; `envs.fake.FakeFactory` runs nothing, for tests.
    """

    kind: str

    def base_image(self, python: str, log: Callable[[str], None] | None = None, *,
                   packages: tuple[str, ...] = (), toolchains: tuple[str, ...] = ()) -> str:
        """The tag of a base image with `python` (X.Y), the Debian `packages` an ecosystem needs besides
        (e.g. `golang-go`; none by default) and the host `toolchains` on top ("rust-1.95.0":
        envs/host_toolchains.py), built on first use. Raises ImageBuildError."""
        ...

    def sandbox(self, image: str, *, network: bool, env: Mapping[str, str] | None = None,
                cache: bool = False, trusted: bool = False) -> Sandbox:
        """A new, unstarted sandbox from `image`.

        `cache` gives it the host's package download cache through a private layer: it reads what is
        there, and what it writes goes away with it. `trusted` (only for steps that run no project code)
        writes into the shared cache itself.
        """
        ...

    def finalize(self, snapshot: str, tag: str, env: Mapping[str, str], labels: Mapping[str, str]) -> str:
        """Give a snapshot its environment variables and a stable tag; returns the tag."""
        ...

    def build(self, context: Path, tag: str, labels: Mapping[str, str]) -> str:
        """Build a Dockerfile build context (the replay check); returns the tag."""
        ...

    def discard(self, images: Sequence[str]) -> None:
        """Remove intermediate images (snapshots, rebuilds); never raises."""
        ...
