"""LocalSandbox: commands run on this host in a scratch directory. NOT a security boundary.

Use it where no Docker engine runs and for fast tests. Limits are best effort: memory via RLIMIT_AS,
file size via RLIMIT_FSIZE; pids and total disk are not enforced. Absolute paths are host paths.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Self

from envs._io import CappedOutput, idle_before
from envs.base import DEFAULT_OUTPUT_CAP, REPORT_CAP_BYTES, ExecResult, SandboxSpec
from envs.errors import EnvError, EnvNotStartedError

_DRAIN_AFTER_EXIT_S = 2.0
"""How long to keep reading after the command exits while background children hold its pipes (as Docker)."""


class LocalSandboxConfig(SandboxSpec):
    """How to start a LocalSandbox."""

    root: Path | None = None
    """Parent of the scratch workdir (default: the system temp directory)."""


class PipeStream:
    """A Stream over a child process's stdin/stdout pipes."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self._wlock = threading.Lock()

    def send(self, data: bytes) -> None:
        """Write to the process's stdin."""
        assert self.proc.stdin is not None
        with self._wlock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def recv(self) -> bytes:
        """Next chunk of stdout; b"" at end of stream."""
        assert self.proc.stdout is not None
        try:
            return os.read(self.proc.stdout.fileno(), 262144)
        except (OSError, ValueError):
            return b""

    def close(self) -> None:
        """Close stdin, then end the process group if it does not exit by itself within a second."""
        with self._wlock:
            if self.proc.stdin and not self.proc.stdin.closed:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
        try:
            self.proc.wait(1)
        except subprocess.TimeoutExpired:
            _killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class LocalSandbox:
    """A Sandbox in a scratch directory on the host; see envs/base.py for the contract."""

    kind = "local"

    def __init__(self, config: LocalSandboxConfig | None = None, **kwargs: Any) -> None:
        self.config = config or LocalSandboxConfig(**kwargs)
        self.workdir = ""
        self._scratch: Path | None = None
        self._network = True
        self._streams: list[PipeStream] = []
        self._snapshots: dict[str, Path] = {}

    def start(self) -> Self:
        """Create the scratch directory (workdir plus a place for snapshots)."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="autoinstall-local-", dir=self.config.root))
            (self._scratch / "workspace").mkdir()
            self.workdir = str(self._scratch / "workspace")
            if not self.config.network:
                self.set_network(False)
        return self

    def stop(self) -> None:
        """End open streams and delete the scratch directory; idempotent."""
        for stream in self._streams:
            _killpg(stream.proc.pid, signal.SIGKILL)
            stream.close()
        self._streams.clear()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _check(self) -> Path:
        if self._scratch is None:
            msg = "The local sandbox is not running: call start() (or use `with LocalSandbox(...)`)."
            raise EnvNotStartedError(msg)
        return self._scratch

    def _path(self, path: str) -> Path:
        self._check()
        return Path(self.workdir, path)

    def _argv(self, cmd: str | Sequence[str]) -> list[str]:
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        return argv if self._network else ["unshare", "--net", "--", *argv]

    def _env(self, env: Mapping[str, str] | None) -> dict[str, str]:
        return {**os.environ, **self.config.env, **(env or {})}

    def _limit(self) -> None:
        """Runs in the child before exec: best-effort memory and file-size limits."""
        limits = self.config.limits
        for which, mb in ((resource.RLIMIT_AS, limits.memory_mb), (resource.RLIMIT_FSIZE, limits.disk_mb)):
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (mb * 2**20, mb * 2**20))

    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
    ) -> ExecResult:
        """Run a command in its own session; on timeout the whole process group is killed."""
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                self._argv(cmd),
                cwd=self._path(cwd or "."),
                env=self._env(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=self._limit,
            )
        except OSError as e:
            workdir = self._path(cwd or ".")
            code = -1 if not workdir.is_dir() else 127 if isinstance(e, FileNotFoundError) else 126
            return ExecResult(exit_code=code, stderr=f"could not start {cmd!r}: {e}", duration_s=0.0)
        until = None if timeout is None else start + timeout
        out, err = CappedOutput(output_cap, until), CappedOutput(output_cap, until)
        timed_out = _collect(proc, {proc.stdout: out, proc.stderr: err}, start, timeout)
        code = proc.wait()
        return ExecResult(
            exit_code=124 if timed_out else (128 - code if code < 0 else code),
            stdout=out.text(),
            stderr=err.text(),
            duration_s=time.monotonic() - start,
            timed_out=timed_out,
            truncated=out.truncated or err.truncated,
            idle_s=idle_before(until, start, out.last_write, err.last_write) if timed_out and until else None,
        )

    def open_stream(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> PipeStream:
        """Start a process with stdin/stdout pipes (stderr discarded)."""
        proc = subprocess.Popen(
            self._argv(argv),
            cwd=self._path("."),
            env=self._env(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            bufsize=0,
        )
        stream = PipeStream(proc)
        self._streams.append(stream)
        return stream

    def put(self, src: Path, dest: str) -> None:
        """Copy a host file or directory to `dest`."""
        _copy(Path(src), self._path(dest))

    def get(self, src: str, dest: Path) -> None:
        """Copy `src` out to the host path `dest`."""
        source = self._path(src)
        if not source.exists():
            msg = f"No such file or directory in the sandbox: {source}"
            raise FileNotFoundError(msg)
        _copy(source, Path(dest))

    def write_file(self, path: str, data: bytes) -> None:
        """Write bytes, creating parent directories."""
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def read_file(self, path: str, *, limit: int = REPORT_CAP_BYTES) -> bytes:
        """The first `limit` bytes of a regular file (a link, FIFO or device is refused, never followed or
        opened for long); FileNotFoundError when absent."""
        target = self._path(path)
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.ENXIO):  # ENXIO: a socket
                raise
            msg = f"Not a regular file in the sandbox: {target}"
            raise FileNotFoundError(msg) from e
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(str(target))
            msg = f"Not a regular file in the sandbox: {target}"
            raise FileNotFoundError(msg)
        with os.fdopen(fd, "rb") as f:
            return f.read(max(limit, 0))

    def snapshot(self, label: str) -> str:
        """Copy the workdir aside; returns the snapshot id."""
        scratch = self._check()
        snap_id = f"local-{uuid.uuid4().hex[:12]}"
        shutil.copytree(self.workdir, scratch / "snapshots" / snap_id, symlinks=True)
        self._snapshots[snap_id] = scratch / "snapshots" / snap_id
        return snap_id

    def restore(self, snapshot_id: str) -> None:
        """Replace the workdir by a copy of the snapshot; open streams end."""
        self._check()
        if snapshot_id not in self._snapshots:
            msg = f"Unknown snapshot {snapshot_id!r} (this sandbox has {sorted(self._snapshots)})."
            raise EnvError(msg)
        for stream in self._streams:
            _killpg(stream.proc.pid, signal.SIGKILL)
        self._streams.clear()
        shutil.rmtree(self.workdir)
        shutil.copytree(self._snapshots[snapshot_id], self.workdir, symlinks=True)

    def set_network(self, enabled: bool) -> None:
        """Off: later commands run under `unshare --net` (root and util-linux unshare needed)."""
        if not enabled:
            ok = os.geteuid() == 0 and shutil.which("unshare") is not None
            if ok:
                ok = (
                    subprocess.run(["unshare", "--net", "true"], capture_output=True, check=False).returncode
                    == 0
                )
            if not ok:
                msg = (
                    "LocalSandbox can only turn the network off as root with unshare(1) (util-linux) "
                    "allowed; use the docker sandbox for network-off verification."
                )
                raise EnvError(msg)
        self._network = enabled


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir() and not src.is_symlink():
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dest, follow_symlinks=False)


def _collect(
    proc: subprocess.Popen[bytes],
    sinks: dict[IO[bytes] | None, CappedOutput],
    start: float,
    timeout: float | None,
) -> bool:
    """Read both pipes into their caps until EOF; kill the group at the deadline. True if timed out."""
    sel = selectors.DefaultSelector()
    for pipe in sinks:
        if pipe is not None:
            sel.register(pipe, selectors.EVENT_READ)
    deadline = None if timeout is None else start + timeout
    timed_out, exited_at = False, None
    while sel.get_map():
        now = time.monotonic()
        if deadline is not None and now >= deadline and not timed_out:
            timed_out = True
            _killpg(proc.pid, signal.SIGTERM)
            deadline = now + 2
        elif timed_out and deadline is not None and now >= deadline:
            _killpg(proc.pid, signal.SIGKILL)
            deadline = None
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at > _DRAIN_AFTER_EXIT_S:
            break
        wait = 0.1 if deadline is None else max(min(0.1, deadline - now), 0)
        for key, _ in sel.select(wait):
            data = os.read(key.fd, 262144)
            if data:
                sinks[key.fileobj].write(data)  # type: ignore[index]
            else:
                sel.unregister(key.fileobj)
    sel.close()
    if timed_out:
        _killpg(proc.pid, signal.SIGKILL)
    for pipe in sinks:
        if pipe is not None:
            pipe.close()
    return timed_out
