"""DockerSandbox: one locked-down container per sandbox."""

from __future__ import annotations

import posixpath
import socket
import time
import uuid
import weakref
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Self

import docker
import docker.errors

from envs._io import STDERR, STDOUT, CappedOutput, SocketStream, idle_before, pump
from envs.base import DEFAULT_OUTPUT_CAP, ExecResult
from envs.docker.cachelayer import create_cache_layer, remove_cache_layer
from envs.docker.channel import ChannelMixin
from envs.docker.container import DockerSandboxConfig, container_env, create_container
from envs.docker.diskwatch import DiskWatch
from envs.docker.engine import _ENGINE_ERRORS, connect, engine_gone
from envs.docker.files import FilesMixin
from envs.docker.network import NETWORK, sandbox_network
from envs.docker.pidslimit import events_file, refused
from envs.docker.snapshots import SnapshotMixin
from envs.docker.upper import layer_changes, layer_dirs
from envs.docker.registry import _has_host, pull_image
from envs.errors import EnvError, EnvNotStartedError, ImageNotFoundError, SandboxLimitError
from envs.interrupts import held

_TIMEOUT_WRAPPER = """t=$1; shift
timeout -k 5 "$t" "$@" & pid=$!
wait $pid; rc=$?
i=0; while [ $i -lt 40 ] && kill -9 -$pid 2>/dev/null; do i=$((i + 1)); sleep 0.05; done
exit $rc"""
"""coreutils timeout kills its process group with TERM, which children forked with TERM blocked escape.
When the command ends, however it ends, what is left of its group (led by timeout's pid: orphans still
forking or holding pids) is swept with KILL, which no fork escapes, so the next command can run. Daemons that
start a session of their own (pg_ctl, redis --daemonize) are not in the group. Builtins only: forking may be
impossible at that point."""
RESOLV_SAVED = "/var/tmp/.autoinstall-resolv.conf"
INSTANCE_LABEL = "autoinstall.sandbox"
_LIVE: weakref.WeakSet[DockerSandbox] = weakref.WeakSet()
"""The sandboxes of this process between start and stop: what `interrupt_sandboxes` ends."""


def interrupt_sandboxes() -> int:
    """Ctrl-C for the sandboxes other threads are using (a batch's builds): remove each one's containers, so
    a command running there returns at once, and from then on every call on it raises KeyboardInterrupt in
    its thread, which unwinds that build as Ctrl-C unwinds a `run` (its `stop` still cleans up). Returns how
    many sandboxes were interrupted."""
    live = list(_LIVE)
    for sandbox in live:
        sandbox.interrupted = True
        with suppress(EnvError, *_ENGINE_ERRORS):
            client = connect(sandbox.config.base_url, timeout=30)  # its own: the build's thread uses the sandbox's
            try:
                for cid in sandbox._unnamed_containers(client.api):
                    with suppress(docker.errors.NotFound):
                        client.api.remove_container(cid, force=True, v=True)
            finally:
                client.close()
    return len(live)


class DockerSandbox(FilesMixin, ChannelMixin, SnapshotMixin):
    """A Sandbox (a DirectChannel, Layered and Changes too) backed by one container running `sleep infinity`; see
    envs/base.py. Its snapshots: envs/docker/snapshots.py."""

    kind = "docker"

    def __init__(self, config: DockerSandboxConfig | None = None, **kwargs: Any) -> None:
        self.config = config or DockerSandboxConfig(**kwargs)
        self.workdir = self.config.workdir
        self._client: docker.DockerClient | None = None
        self._cid: str | None = None
        self._network = self.config.network
        self._image_env: list[str] = []
        self.limit_error: str | None = None
        self._cache_layer: tuple[str, Path] | None = None
        self._events: tuple[str | None, Path | None] | None = None  # (container id, its pids.events on the host)
        self._layers: tuple[str | None, tuple[str, tuple[str, ...]] | None] | None = None
        """(container id, its writable layer's upper and lower directories on this host, or None): `changes`."""
        self._instance = {INSTANCE_LABEL: uuid.uuid4().hex}
        """On every container of this sandbox: what `stop` removes even when an interrupt (SIGTERM, Ctrl-C)
        came between the engine creating a container and this object learning its id."""
        self._base_size = self._image_size = 0  # bytes of the image started from, and of the container's image
        self.committed = 0
        """Bytes this sandbox's snapshots added to its image: what earlier steps of the build wrote. The
        disk watch counts them with what the running container writes, so the limit is per build."""
        self.disk_used = -1
        self.disk_growth: deque[float] = deque(maxlen=8)
        """Set by the disk watch (envs/docker/diskwatch.py): what the container and its /cache hold, and when
        that last grew; `exec` reads it for how long a command that timed out had been idle."""
        self._net = NETWORK
        self.interrupted = False
        """Set by `interrupt_sandboxes`: its containers are gone and every call raises KeyboardInterrupt."""

    # lifecycle
    def start(self) -> Self:
        """Create and start the container."""
        if self._cid:
            return self
        if not self.config.image:
            msg = "DockerSandbox needs an image: pass image=ensure_base_image() or another tag."
            raise EnvError(msg)
        self._client = connect(self.config.base_url)
        _LIVE.add(self)
        try:
            with self._engine("start"):
                image = self._local_or_pulled(self.config.image)
                self._image_env = list(image["Config"].get("Env") or [])
                self._base_size = int(image.get("Size") or 0)
                if self.config.cache_dir and self.config.cache_mode == "layered":
                    self._cache_layer = create_cache_layer(self._client.api, self.config.cache_dir)
                self._open_channel(self.config.channel)
                self._create(self.config.image)
        except BaseException:
            with suppress(EnvError):
                self.stop()
            raise
        return self

    def stop(self) -> None:
        """Remove the container; idempotent."""
        self._halt_watchdog()
        cid, self._cid = self._cid, None
        if self._client:
            with self._engine("stop"):
                for leftover in [cid] if cid else self._unnamed_containers():
                    try:
                        self._client.api.remove_container(leftover, force=True, v=True)
                    except docker.errors.NotFound:
                        pass
                    except docker.errors.APIError as e:  # interrupt_sandboxes is removing it right now
                        if not (self.interrupted and e.status_code == 409):
                            raise
        layer, self._cache_layer = self._cache_layer, None
        if layer and self._client:
            with self._engine("stop"):
                remove_cache_layer(self._client.api, *layer)
        self._close_channel()
        if self._client:
            self._client.close()
            self._client = None
        _LIVE.discard(self)

    def _unnamed_containers(self, api: docker.APIClient | None = None) -> list[str]:
        """This sandbox's containers by its label (through `api`, default its own client): one an interrupt left
        before its id was known."""
        if api is None:
            assert self._client is not None
            api = self._client.api
        label = "=".join(next(iter(self._instance.items())))
        return [c["Id"] for c in api.containers(all=True, quiet=True, filters={"label": label})]

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        except EnvError:
            if exc[0] is None:
                raise

    def _local_or_pulled(self, ref: str) -> dict[str, Any]:
        """The image's inspect data; a registry reference missing here is pulled first (`pull="missing"`)."""
        assert self._client is not None
        try:
            return self._client.api.inspect_image(ref)
        except docker.errors.ImageNotFound as e:
            if self.config.pull == "missing" and _has_host(ref.split("/", 1)[0]) and "/" in ref:
                pull_image(ref, base_url=self.config.base_url)
                return self._client.api.inspect_image(ref)
            msg = (f"Image {ref!r} is not on this engine; build it (`autoinstall base build`, or rebuild the "
                   "environment), or push it to a registry and use REGISTRY/NAME:TAG.")
            raise ImageNotFoundError(msg) from e

    @property
    def container_id(self) -> str | None:
        return self._cid

    def forks_refused(self) -> int | None:
        """Forks the container's pids limit refused so far, read on the host; None where the host cannot see its
        cgroup (then the caller asks inside: envs.testrun.forks_refused)."""
        if self._events is None or self._events[0] != self._cid:
            pid = int(self._api.inspect_container(self._cid)["State"].get("Pid") or 0)
            self._events = (self._cid, events_file(pid) if pid else None)
        return refused(self._events[1]) if self._events[1] is not None else None

    @property
    def exec_env(self) -> dict[str, str]:
        """What every command in the sandbox runs with on top of the image's environment (proxies, CA bundle,
        caches, the config's env): `docker exec -e` for a shell of one's own."""
        return container_env(self.config)

    @property
    def cache_upper(self) -> Path | None:
        """Where this sandbox's writes under /cache land on the host (layered mode); the disk watch counts it."""
        return self._cache_layer[1] / "upper" if self._cache_layer else None

    def _create(self, image: str) -> None:
        assert self._client is not None
        api = self._client.api
        volume = self._cache_layer[0] if self._cache_layer else None
        size = int(api.inspect_image(image).get("Size") or 0) if image != self.config.image else self._base_size
        self.committed, self._image_size = max(0, size - self._base_size), size
        self._net = sandbox_network(api, self.config.base_url)
        with held():  # a signal during the request would leave a container whose id this sandbox never learnt
            self._cid = cid = create_container(self._client, self.config, image, volume, self._net, self._instance,
                                               channel=self._channel_host)
        if not self._network:
            api.disconnect_container_from_network(cid, self._net)
        api.start(cid)
        if not self._network:
            self._resolver(online=False)
        DiskWatch.watch(self, cid)

    # plumbing
    @property
    def _api(self) -> docker.APIClient:
        self._check()
        assert self._client is not None
        return self._client.api

    def _check(self) -> None:
        if self.interrupted:
            raise KeyboardInterrupt
        if self.limit_error:
            raise SandboxLimitError(self.limit_error)
        if not self._cid:
            msg = "The Docker sandbox is not running: call start() (or use `with DockerSandbox(...)`)."
            raise EnvNotStartedError(msg)

    def _path(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.workdir, path))

    @contextmanager
    def _engine(self, what: str) -> Iterator[None]:
        """Turn docker/requests failures into EnvError subclasses that say what to do."""
        try:
            yield
        except docker.errors.APIError as e:
            if self.interrupted and what != "stop":  # stop cleans up whatever happens
                raise KeyboardInterrupt from e
            if self.limit_error:
                raise SandboxLimitError(self.limit_error) from e
            text = str(e.explanation or e)
            if e.status_code == 404 and "no such container" in text.lower():
                msg = f"{what} failed: the container is gone ({text}). Start a new sandbox."
            elif e.status_code == 409 and "not running" in text:
                msg = f"{what} failed: the container is not running ({text}). Restore a snapshot or restart."
            else:
                msg = f"{what} failed: the Docker engine answered {e.status_code}: {text}"
            raise EnvError(msg) from e
        except _ENGINE_ERRORS as e:
            if self.interrupted and what != "stop":  # stop cleans up whatever happens
                raise KeyboardInterrupt from e
            raise engine_gone(e, what, self.config.base_url) from e

    def _attach(self, exec_id: str) -> tuple[socket.socket, bytes, object]:
        """Start an exec with a hijacked socket; returns the raw socket and bytes already buffered."""
        sio = self._api.exec_start(exec_id, socket=True)
        raw: socket.socket = getattr(sio, "_sock", sio)
        prefix = b""
        buffered = getattr(
            getattr(getattr(getattr(sio, "_response", None), "raw", None), "_fp", None), "fp", None
        )
        if buffered is not None:
            raw.setblocking(False)
            try:
                prefix = buffered.read1(1 << 16) or b""
            except (BlockingIOError, ValueError):
                prefix = b""
            raw.setblocking(True)
        return raw, prefix, sio

    # commands
    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
    ) -> ExecResult:
        """Run a command via `docker exec`, streaming its output through the cap."""
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        if timeout is not None:
            argv = ["sh", "-c", _TIMEOUT_WRAPPER, "sh", f"{timeout:.3f}", *argv]
        start = time.monotonic()
        with self._engine("exec"):
            exec_id = self._api.exec_create(
                self._cid, argv, workdir=self._path(cwd or "."), environment=self.exec_env | dict(env or {})
            )["Id"]
            sock, prefix, keep = self._attach(exec_id)
        until = None if timeout is None else start + timeout  # `timeout` in the container starts later
        out, err = CappedOutput(output_cap, until), CappedOutput(output_cap, until)
        deadline = None if timeout is None else start + timeout + 10
        try:
            hung = pump(sock, prefix, {STDOUT: out, STDERR: err}, deadline)
        except OSError as e:
            if self.interrupted:
                raise KeyboardInterrupt from e
            raise engine_gone(e, "exec", self.config.base_url) from e
        finally:
            sock.close()
            del keep
        if self.interrupted:
            raise KeyboardInterrupt
        if self.limit_error:
            raise SandboxLimitError(self.limit_error)
        with self._engine("exec"):
            code = self._exit_code(exec_id)
        duration = time.monotonic() - start
        timed_out = timeout is not None and (hung or (code in (124, 137) and duration >= timeout))
        stdout, stderr = out.text(), err.text()
        if code == 126 and stdout.startswith("OCI runtime exec failed"):
            code = -1 if "chdir to cwd" in stdout else 127 if "not found" in stdout else 126
            stdout, stderr = "", stdout.strip() + "\n"
        return ExecResult(
            exit_code=124 if timed_out else code,
            stdout=stdout,
            stderr=stderr,
            duration_s=duration,
            timed_out=timed_out,
            truncated=out.truncated or err.truncated,
            idle_s=idle_before(until, start, out.last_write, err.last_write, *list(self.disk_growth))
            if timed_out and until is not None else None,
        )

    def changes(self) -> list[tuple[str, str]] | None:
        """The container's writable layer read on this host (envs/docker/upper.py); see envs/base.py `Changes`.
        None where the engine's storage is not overlay2 on this host."""
        if self._layers is None or self._layers[0] != self._cid:
            with self._engine("changes"):
                driver = self._api.inspect_container(self._cid).get("GraphDriver") or {}
            self._layers = (self._cid, layer_dirs(driver))
        found = self._layers[1]
        return None if found is None else layer_changes(*found)

    def _exit_code(self, exec_id: str) -> int:
        for _ in range(200):
            info = self._api.exec_inspect(exec_id)
            if not info.get("Running"):
                code = info.get("ExitCode")
                return -1 if code is None else int(code)
            time.sleep(0.005)
        return -1

    def open_stream(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> SocketStream:
        """Start a process with stdin attached; frames are demultiplexed by SocketStream."""
        with self._engine("open_stream"):
            exec_id = self._api.exec_create(
                self._cid,
                list(argv),
                stdin=True,
                stdout=True,
                stderr=False,
                workdir=self.workdir,
                environment=self.exec_env | dict(env or {}),
            )["Id"]
            sock, prefix, keep = self._attach(exec_id)
        return SocketStream(sock, prefix, keepalive=keep)

    def _resolver(self, *, online: bool) -> None:
        """Offline, names fail at once instead of after the network's resolver times out (10 s a lookup):
        point /etc/resolv.conf at a closed local port, and put the network's resolver back when online."""
        script = (f"cat {RESOLV_SAVED} > /etc/resolv.conf" if online else
                  f"cp /etc/resolv.conf {RESOLV_SAVED}; printf 'nameserver 127.0.0.1\\noptions attempts:1 "
                  "timeout:1\\n' > /etc/resolv.conf")
        self.exec(["sh", "-c", f"[ -w /etc/resolv.conf ] && {{ {script}; }} || true"], timeout=30)

    def _halt_watchdog(self) -> None:
        if self._cid:
            DiskWatch.unwatch(self.config.base_url, self._cid)

    def set_network(self, enabled: bool) -> None:
        """Connect to or disconnect from the sandbox network (envs/docker/network.py)."""
        if enabled == self._network:
            self._check()
            return
        with self._engine("set_network"):
            if enabled:
                self._api.connect_container_to_network(self._cid, self._net)
            else:
                self._api.disconnect_container_from_network(self._cid, self._net)
        self._resolver(online=enabled)
        self._network = enabled
