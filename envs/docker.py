"""DockerSandbox: one locked-down container per sandbox. The only module that imports the docker SDK."""

from __future__ import annotations

import io
import os
import posixpath
import re
import socket
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Self

import docker
import docker.errors
import requests
from pydantic import BaseModel, Field

from envs._io import STDERR, STDOUT, CappedOutput, SocketStream, move_into, pump, root_owned
from envs.base import DEFAULT_OUTPUT_CAP, LABEL, ExecResult, SandboxSpec
from envs.errors import (
    EngineUnavailableError,
    EnvError,
    EnvNotStartedError,
    ImageBuildError,
    ImageNotFoundError,
    SandboxLimitError,
)

HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
CA_PATH = "/etc/autoinstall/ca-bundle.crt"
"""Where the trusted CA bundle lives inside sandboxes and base images."""
CA_ENV = ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO")
PROXY_VARS = tuple(v for n in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY") for v in (n, n.lower()))
CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL"]
"""Capabilities kept: what apt (privilege drop to _apt) and pip need; everything else is dropped."""
SNAPSHOT_REPO = "autoinstall-snapshot"
_TIMEOUT_WRAPPER = """t=$1; shift
timeout -k 5 "$t" "$@" & pid=$!
wait $pid; rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  i=0; while [ $i -lt 40 ] && kill -9 -$pid 2>/dev/null; do i=$((i + 1)); sleep 0.05; done
fi
exit $rc"""
"""coreutils timeout kills its process group with TERM, which children forked with TERM blocked escape;
after a timeout the group (led by timeout's pid) is swept with KILL, which no fork escapes. Builtins only:
forking may be impossible at that point."""
KIND_LABEL = f"{LABEL}.kind"
_ENGINE_ERRORS = (
    requests.exceptions.RequestException,
    docker.errors.DockerException,
    ConnectionError,
    TimeoutError,
)


def _default_ca_bundle() -> Path | None:
    return HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None


def _where(base_url: str | None) -> str:
    return base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def connect(base_url: str | None = None, timeout: int = 120) -> docker.DockerClient:
    """A client for the engine at `base_url` (default: DOCKER_HOST or the local socket), pinged once."""
    try:
        client = (
            docker.DockerClient(base_url=base_url, timeout=timeout)
            if base_url
            else docker.from_env(timeout=timeout)
        )
        client.ping()
    except _ENGINE_ERRORS as e:
        msg = (
            f"No Docker engine answers at {_where(base_url)} ({type(e).__name__}: {e}).\n"
            "Install Docker (`apt-get install -y docker.io`), start the engine (`dockerd &` or "
            "`systemctl start docker`), or set DOCKER_HOST to a running engine."
        )
        raise EngineUnavailableError(msg) from e
    return client


_ENGINE_INFO: dict[str | None, dict[str, Any]] = {}


def _engine_info(client: docker.DockerClient, base_url: str | None) -> dict[str, Any]:
    """The engine's `docker info`, fetched once per engine per process (CPUs and storage driver)."""
    if base_url not in _ENGINE_INFO:
        _ENGINE_INFO[base_url] = client.info()
    return _ENGINE_INFO[base_url]


def check_engine(base_url: str | None = None) -> None:
    """Raise EngineUnavailableError, saying how to fix it, unless a Docker engine answers."""
    connect(base_url, timeout=10).close()


def engine_gone(e: BaseException, what: str, base_url: str | None) -> EnvError:
    """The error for an engine that stopped answering mid-session."""
    msg = (
        f"The Docker engine at {_where(base_url)} stopped answering during {what} "
        f"({type(e).__name__}: {e}). Check that dockerd is still running (`docker info`), "
        "then start the sandbox again; its container may need `autoinstall cleanup`."
    )
    return EngineUnavailableError(msg)


class DockerSandboxConfig(SandboxSpec):
    """How to start a DockerSandbox."""

    workdir: str = "/workspace"
    """Absolute path of the workspace inside the container."""
    ca_bundle: Path | None = Field(default_factory=_default_ca_bundle)
    """Host CA bundle mounted read-only at CA_PATH and trusted by pip/uv/requests/curl/git."""
    pass_proxy_env: bool = True
    """Carry HTTP_PROXY/HTTPS_PROXY/NO_PROXY (both cases) from the host environment into the container."""
    cache_dir: Path | None = None
    """Host directory mounted at /cache for the uv and pip caches (UV_CACHE_DIR, PIP_CACHE_DIR)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra labels on the container and its snapshots."""
    base_url: str | None = None
    """Docker engine address; default DOCKER_HOST or the local socket."""
    tmp_mb: int = 1024
    """Size of the tmpfs on /tmp (counts against the memory limit)."""
    disk_poll_s: float = 3.0
    """How often the disk watchdog measures what the container wrote."""


class DockerSandbox:
    """A Sandbox backed by one container running `sleep infinity`; see envs/base.py for the contract."""

    kind = "docker"

    def __init__(self, config: DockerSandboxConfig | None = None, **kwargs: Any) -> None:
        self.config = config or DockerSandboxConfig(**kwargs)
        self.workdir = self.config.workdir
        self._client: docker.DockerClient | None = None
        self._cid: str | None = None
        self._network = self.config.network
        self._image_env: list[str] = []
        self.limit_error: str | None = None

    # lifecycle
    def start(self) -> Self:
        """Create and start the container."""
        if self._cid:
            return self
        if not self.config.image:
            msg = "DockerSandbox needs an image: pass image=ensure_base_image() or another tag."
            raise EnvError(msg)
        self._client = connect(self.config.base_url)
        try:
            with self._engine("start"):
                try:
                    image = self._client.api.inspect_image(self.config.image)
                except docker.errors.ImageNotFound as e:
                    msg = f"Image {self.config.image!r} is not on this engine; build it (`autoinstall base`)."
                    raise ImageNotFoundError(msg) from e
                self._image_env = list(image["Config"].get("Env") or [])
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
        if cid and self._client:
            with self._engine("stop"), suppress(docker.errors.NotFound):
                self._client.api.remove_container(cid, force=True, v=True)
        if self._client:
            self._client.close()
            self._client = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        except EnvError:
            if exc[0] is None:
                raise

    @property
    def container_id(self) -> str | None:
        return self._cid

    def _create(self, image: str) -> None:
        assert self._client is not None
        api = self._client.api
        c = self.config
        volumes = {}
        if c.ca_bundle:
            volumes[str(c.ca_bundle.resolve())] = {"bind": CA_PATH, "mode": "ro"}
        if c.cache_dir:
            c.cache_dir.mkdir(parents=True, exist_ok=True)
            volumes[str(c.cache_dir.resolve())] = {"bind": "/cache", "mode": "rw"}
        info = _engine_info(self._client, c.base_url)
        ncpu = float(info.get("NCPU") or 1)
        status = dict(info.get("DriverStatus") or [])
        quota = info.get("Driver") == "overlay2" and status.get("Backing Filesystem") == "xfs"
        host_config = api.create_host_config(
            storage_opt={"size": f"{c.limits.disk_mb}m"} if quota else None,
            init=True,
            cap_drop=["ALL"],
            cap_add=CAPS,
            security_opt=["no-new-privileges"],
            mem_limit=f"{c.limits.memory_mb}m",
            memswap_limit=f"{c.limits.memory_mb}m",
            pids_limit=c.limits.pids,
            nano_cpus=int(min(c.limits.cpus, ncpu) * 1e9),
            tmpfs={"/tmp": f"rw,exec,nosuid,nodev,size={c.tmp_mb}m,mode=1777"},
            binds=volumes,
        )
        spec = {
            "command": ["sleep", "infinity"],
            "working_dir": self.workdir,
            "environment": self._container_env(),
            "labels": {LABEL: "1", KIND_LABEL: "sandbox", **c.labels},
        }
        try:
            cid = api.create_container(image, host_config=host_config, **spec)["Id"]
        except docker.errors.APIError as e:
            if not quota or "storage-opt" not in str(e.explanation):
                raise
            host_config.pop("StorageOpt", None)  # xfs without pquota: the watchdog alone enforces disk_mb
            cid = api.create_container(image, host_config=host_config, **spec)["Id"]
        self._cid = cid
        if not self._network:
            api.disconnect_container_from_network(cid, "bridge")
        api.start(cid)
        _DiskWatch.watch(self, cid)

    def _container_env(self) -> dict[str, str]:
        c = self.config
        env = {k: os.environ[k] for k in PROXY_VARS if c.pass_proxy_env and k in os.environ}
        if c.ca_bundle:
            env |= dict.fromkeys(CA_ENV, CA_PATH)
        if c.cache_dir:
            env |= {"UV_CACHE_DIR": "/cache/uv", "PIP_CACHE_DIR": "/cache/pip", "UV_LINK_MODE": "copy"}
        return env | c.env

    # plumbing
    @property
    def _api(self) -> docker.APIClient:
        self._check()
        assert self._client is not None
        return self._client.api

    def _check(self) -> None:
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
                self._cid, argv, workdir=self._path(cwd or "."), environment=dict(env or {})
            )["Id"]
            sock, prefix, keep = self._attach(exec_id)
        out, err = CappedOutput(output_cap), CappedOutput(output_cap)
        deadline = None if timeout is None else start + timeout + 10
        try:
            hung = pump(sock, prefix, {STDOUT: out, STDERR: err}, deadline)
        except OSError as e:
            raise engine_gone(e, "exec", self.config.base_url) from e
        finally:
            sock.close()
            del keep
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
        )

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
                environment=dict(env or {}),
            )["Id"]
            sock, prefix, keep = self._attach(exec_id)
        return SocketStream(sock, prefix, keepalive=keep)

    # files
    def put(self, src: Path, dest: str) -> None:
        """Copy a host file or directory to `dest` (parents created, files owned by root)."""
        with tempfile.TemporaryFile() as f:
            with tarfile.open(fileobj=f, mode="w") as tar:
                tar.add(src, arcname=self._path(dest).lstrip("/"), filter=root_owned)
            f.seek(0)
            with self._engine("put"):
                self._api.put_archive(self._cid, "/", f)

    def write_file(self, path: str, data: bytes) -> None:
        """Write bytes to `path`, creating parent directories."""
        info = tarfile.TarInfo(self._path(path).lstrip("/"))
        info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
        with tempfile.TemporaryFile() as f:
            with tarfile.open(fileobj=f, mode="w") as tar:
                tar.addfile(info, io.BytesIO(data))
            f.seek(0)
            with self._engine("write_file"):
                self._api.put_archive(self._cid, "/", f)

    def _archive(self, path: str, f: Any) -> None:
        with self._engine("copy out"):
            try:
                chunks, _ = self._api.get_archive(self._cid, self._path(path))
            except docker.errors.NotFound as e:
                if "no such container" in str(e.explanation).lower():
                    raise
                msg = f"No such file or directory in the sandbox: {self._path(path)}"
                raise FileNotFoundError(msg) from e
            for chunk in chunks:
                f.write(chunk)
        f.seek(0)

    def read_file(self, path: str) -> bytes:
        """Read a file; FileNotFoundError when absent, IsADirectoryError for a directory."""
        with tempfile.TemporaryFile() as f:
            self._archive(path, f)
            with tarfile.open(fileobj=f) as tar:
                member = tar.next()
                if member is None or member.isdir():
                    raise IsADirectoryError(self._path(path))
                reader = tar.extractfile(member)
                if reader is None:
                    msg = f"Not a regular file in the sandbox: {self._path(path)}"
                    raise FileNotFoundError(msg)
                return reader.read()

    def get(self, src: str, dest: Path) -> None:
        """Copy a file or directory out to `dest` (merged into an existing directory)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as f, tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
            self._archive(src, f)
            with tarfile.open(fileobj=f) as tar:
                tar.extractall(tmp, filter="tar")
                top = Path(tmp) / tar.getnames()[0].split("/")[0]
            move_into(top, dest)

    # state
    def snapshot(self, label: str) -> str:
        """Commit the container to an image labelled autoinstall.kind=snapshot; returns its tag.

        The tag (not the id) is returned so that `remove_image(tag)` can untag a snapshot that later
        images were built on without failing on their dependency.
        """
        tag = (
            (re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip(".-")[:80] or "snap") + "-" + uuid.uuid4().hex[:8]
        )
        labels = {LABEL: "1", KIND_LABEL: "snapshot", f"{LABEL}.label": label[:200], **self.config.labels}
        with self._engine("snapshot"):
            self._api.commit(self._cid, SNAPSHOT_REPO, tag, conf={"Labels": labels, "Env": self._image_env})
        return f"{SNAPSHOT_REPO}:{tag}"

    def restore(self, snapshot_id: str) -> None:
        """Replace the container by a new one from the snapshot; also clears a disk-limit stop."""
        if self._client is None:
            self._check()
        assert self._client is not None
        self.limit_error = None
        self._halt_watchdog()
        old, self._cid = self._cid, None
        with self._engine("restore"):
            if old:
                self._client.api.remove_container(old, force=True, v=True)
            self._create(snapshot_id)

    def _halt_watchdog(self) -> None:
        if self._cid:
            _DiskWatch.unwatch(self.config.base_url, self._cid)

    def set_network(self, enabled: bool) -> None:
        """Connect to or disconnect from the default bridge network."""
        if enabled == self._network:
            self._check()
            return
        with self._engine("set_network"):
            if enabled:
                self._api.connect_container_to_network(self._cid, "bridge")
            else:
                self._api.disconnect_container_from_network(self._cid, "bridge")
        self._network = enabled


class _DiskWatch(threading.Thread):
    """One poller per engine for the writable-layer size of every running sandbox (ext4 has no quota).

    A single listing per interval covers all sandboxes, so 32 sandboxes cost one engine call, not 32.
    """

    _engines: dict[str | None, _DiskWatch] = {}
    _lock = threading.Lock()

    def __init__(self, base_url: str | None) -> None:
        super().__init__(name="disk-watch", daemon=True)
        self.base_url = base_url
        self.watched: dict[str, DockerSandbox] = {}

    @classmethod
    def watch(cls, sandbox: DockerSandbox, cid: str) -> None:
        """Start watching `cid` for `sandbox` (starts the engine's poller if needed)."""
        with cls._lock:
            poller = cls._engines.get(sandbox.config.base_url)
            if poller is None or not poller.is_alive():
                poller = cls._engines[sandbox.config.base_url] = cls(sandbox.config.base_url)
                poller.watched[cid] = sandbox
                poller.start()
            else:
                poller.watched[cid] = sandbox

    @classmethod
    def unwatch(cls, base_url: str | None, cid: str) -> None:
        with cls._lock:
            poller = cls._engines.get(base_url)
            if poller is not None:
                poller.watched.pop(cid, None)

    def _interval(self) -> float:
        with self._lock:
            return min((sb.config.disk_poll_s for sb in self.watched.values()), default=3.0)

    def run(self) -> None:
        """Poll until the engine stops answering; idle (nothing watched) costs nothing but a wait."""
        try:
            client = connect(self.base_url, timeout=300)
        except EnvError:
            return
        try:
            while True:
                time.sleep(self._interval())
                with self._lock:
                    watched = dict(self.watched)
                if not watched:
                    continue
                rows = client.api.containers(all=True, filters={"label": f"{LABEL}=1"}, size=True)
                sizes = {row["Id"]: int(row.get("SizeRw") or 0) for row in rows}
                for cid, sandbox in watched.items():
                    limit = sandbox.config.limits.disk_mb * 1024 * 1024
                    if sizes.get(cid, 0) > limit and cid in self.watched:
                        sandbox.limit_error = (
                            f"The sandbox wrote {sizes[cid] // 2**20} MiB to its filesystem, over Limits.disk_mb="
                            f"{limit // 2**20}; it was stopped. Raise disk_mb, or have the command write less "
                            "(e.g. pip --no-cache-dir), then restore a snapshot or start a new sandbox."
                        )
                        self.unwatch(self.base_url, cid)
                        client.api.kill(cid)
        except _ENGINE_ERRORS:
            with self._lock:
                self._engines.pop(self.base_url, None)
            return
        finally:
            client.close()


class CleanupReport(BaseModel):
    """What `cleanup` removed (or would remove, with dry_run)."""

    dry_run: bool
    containers: list[str] = Field(default_factory=list)
    images: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


def cleanup(
    dry_run: bool = False, *, labels: Mapping[str, str] | None = None, base_url: str | None = None
) -> CleanupReport:
    """Remove every container labelled autoinstall=1 and every snapshot image no user name points to.

    Args:
        dry_run: only list what would be removed.
        labels: narrow to containers/images that also carry these labels.
        base_url: engine address (default DOCKER_HOST or the local socket).

    Returns:
        The ids removed (or to remove), and errors for those that could not be removed (e.g. in use).

    Raises:
        EngineUnavailableError: no engine answers.
    """
    extra = [f"{k}={v}" for k, v in (labels or {}).items()]
    report = CleanupReport(dry_run=dry_run)
    client = connect(base_url)
    try:
        api = client.api
        for c in api.containers(all=True, filters={"label": [f"{LABEL}=1", *extra]}):
            report.containers.append(c["Id"])
            if not dry_run:
                _try(report, lambda cid=c["Id"]: api.remove_container(cid, force=True, v=True))
        snapshots = api.images(all=True, filters={"label": [f"{KIND_LABEL}=snapshot", *extra]})
        for img in sorted(snapshots, key=lambda i: i.get("Created", 0), reverse=True):
            tags = [t for t in img.get("RepoTags") or [] if t != "<none>:<none>"]
            if any(not t.startswith(f"{SNAPSHOT_REPO}:") for t in tags):
                continue
            report.images.append(img["Id"])
            if not dry_run:
                _try(report, lambda iid=img["Id"]: api.remove_image(iid, force=True))
    except _ENGINE_ERRORS as e:
        raise engine_gone(e, "cleanup", base_url) from e
    finally:
        client.close()
    return report


def _try(report: CleanupReport, action: Callable[[], object]) -> None:
    try:
        action()
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as e:
        report.errors.append(str(e.explanation or e))


def remove_image(image: str, *, base_url: str | None = None) -> bool:
    """Remove an image by id or tag; False when it did not exist."""
    client = connect(base_url)
    try:
        client.api.remove_image(image, force=True)
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError as e:
        msg = f"Could not remove image {image}: {e.explanation or e}"
        raise EnvError(msg) from e
    finally:
        client.close()
    return True


# Engine helpers for envs/baseimage.py (only this module imports docker).
def image_labels(ref: str, *, base_url: str | None = None) -> dict[str, str] | None:
    """The labels of a local image, or None when there is no such image."""
    client = connect(base_url)
    try:
        return dict(client.api.inspect_image(ref)["Config"].get("Labels") or {})
    except docker.errors.ImageNotFound:
        return None
    finally:
        client.close()


def list_images(labels: Mapping[str, str], *, base_url: str | None = None) -> list[dict[str, Any]]:
    """Local images carrying all `labels`: id, tags, created, size, labels."""
    client = connect(base_url)
    try:
        rows = client.api.images(filters={"label": [f"{k}={v}" for k, v in labels.items()]})
    finally:
        client.close()
    return [
        {
            "id": r["Id"],
            "tags": r.get("RepoTags") or [],
            "created": r.get("Created"),
            "size": r.get("Size"),
            "labels": r.get("Labels") or {},
        }
        for r in rows
    ]


def try_pull(ref: str, *, timeout: int = 60, base_url: str | None = None) -> str | None:
    """Pull `ref` if a registry answers; None (not an error) when it does not."""
    client = connect(base_url, timeout=timeout)
    repo, _, tag = ref.rpartition(":")
    try:
        client.api.pull(repo, tag=tag)
        return str(client.api.inspect_image(ref)["Id"])
    except _ENGINE_ERRORS:
        return None
    finally:
        client.close()


def import_rootfs(tarball: Path, tag: str, labels: Mapping[str, str], *, base_url: str | None = None) -> str:
    """`docker import` a root filesystem tarball with labels; returns the tag."""
    client = connect(base_url, timeout=1800)
    changes = [f'LABEL "{k}"="{v}"' for k, v in labels.items()]
    changes += ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 'CMD ["bash"]']
    repo, _, name = tag.rpartition(":")
    try:
        client.api.import_image_from_file(str(tarball), repository=repo, tag=name, changes=changes)
        client.api.inspect_image(tag)
    except _ENGINE_ERRORS as e:
        msg = f"docker import of {tarball} as {tag} failed: {e}"
        raise ImageBuildError(msg) from e
    finally:
        client.close()
    return tag


def build_image(
    context: Path,
    tag: str,
    *,
    labels: Mapping[str, str],
    buildargs: Mapping[str, str],
    log: Callable[[str], None] | None = None,
    base_url: str | None = None,
) -> str:
    """Build `context`/Dockerfile as `tag` (legacy builder), streaming lines to `log`; returns the tag."""
    client = connect(base_url, timeout=3600)
    tail: list[str] = []
    try:
        for item in client.api.build(
            path=str(context),
            tag=tag,
            labels=dict(labels),
            buildargs=dict(buildargs),
            rm=True,
            forcerm=True,
            decode=True,
            pull=False,
        ):
            if "error" in item:
                detail = "".join(tail[-30:])
                msg = f"Building {tag} failed: {item['error'].strip()}\nLast build output:\n{detail}"
                raise ImageBuildError(msg)
            line = item.get("stream") or ""
            if line:
                tail.append(line)
                if log and line.strip():
                    log(line.rstrip())
    except _ENGINE_ERRORS as e:
        raise engine_gone(e, f"the build of {tag}", base_url) from e
    finally:
        client.close()
    return tag


def save_images(images: list[str], dest: Path, *, base_url: str | None = None) -> Path:
    """`docker save` `images` into one tarball at `dest` (`docker load -i` restores them); returns dest.

    The tarball is streamed to `dest`.partial and renamed when complete, so `dest` is never half-written.

    Raises:
        ImageNotFoundError: an image does not exist locally.
        EnvError: the tarball could not be written (e.g. the disk filled up); nothing is left behind.
    """
    import errno

    client = connect(base_url, timeout=3600)
    partial = dest.with_name(dest.name + ".partial")
    try:
        for image in images:
            try:
                client.api.inspect_image(image)
            except docker.errors.ImageNotFound as e:
                msg = f"Cannot save {image}: no such local image; build it again or remove it from the export."
                raise ImageNotFoundError(msg) from e
        response = client.api._get(client.api._url("/images/get"), params={"names": images}, stream=True)
        client.api._raise_for_status(response)
        with open(partial, "wb") as f:
            for chunk in response.iter_content(chunk_size=1 << 20):
                f.write(chunk)
        partial.replace(dest)
    except _ENGINE_ERRORS as e:
        raise engine_gone(e, f"`docker save` of {', '.join(images)}", base_url) from e
    except OSError as e:
        if e.errno == errno.ENOSPC:
            msg = (f"The disk holding {dest.parent} filled up while saving {', '.join(images)}; the partial "
                   f"tarball was removed. Free space there (or export to a larger disk) and run the export again.")
        else:
            msg = f"Could not write {dest} while saving {', '.join(images)}: {e}"
        raise EnvError(msg) from e
    finally:
        partial.unlink(missing_ok=True)
        client.close()
    return dest


# Registry push and pull, for images built on one machine and used on another (batch --executor ray).
_REGISTRY = re.compile(r"^(localhost|\[[0-9a-fA-F:]+\]|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)(:\d{1,5})?"
                       r"(/[a-z0-9]+([._-][a-z0-9]+)*)*$")


def _has_host(component: str) -> bool:
    """Whether an image name's first component names a registry host (Docker's rule)."""
    return "." in component or ":" in component or component == "localhost"


def registry_ref(image: str, registry: str) -> str:
    """The reference `REGISTRY/NAME:TAG` of a local image `NAME:TAG` in `registry` (HOST[:PORT][/PATH]);
    a registry host already in `image` is replaced.

    Raises:
        RegistryError: `registry` is not HOST[:PORT], or `image` has no name to push under.
    """
    from envs.errors import RegistryError  # appended after the module's imports

    host = registry.strip().removeprefix("http://").removeprefix("https://").rstrip("/")
    if not _REGISTRY.match(host) or not _has_host(host.split("/", 1)[0]):
        msg = (f"{registry!r} is not a registry address: give HOST:PORT (e.g. 127.0.0.1:5000 or "
               "registry.example.com:5000); a bare name would be read by Docker as a Docker Hub namespace.")
        raise RegistryError(msg)
    name, tag = docker.utils.parse_repository_tag(image)
    if image.startswith("sha256:") or "@" in image:
        msg = f"Cannot push {image}: give the image a name and tag (NAME:TAG) first."
        raise RegistryError(msg)
    first, _, rest = name.partition("/")
    if rest and _has_host(first):
        name = rest
    return f"{host}/{name}:{tag or 'latest'}"


def _registry_advice(registry: str) -> str:
    return (f"Check that a registry runs at {registry} and that this machine reaches it (`curl http://{registry}"
            f"/v2/` answers), that it accepts pushes (not read-only; `docker login {registry}` if it needs "
            "credentials), and that the Docker engine may use it (a plain-HTTP registry outside 127.0.0.0/8 "
            "must be in insecure-registries in /etc/docker/daemon.json).")


def _stream_errors(items: Iterator[dict[str, Any]]) -> str | None:
    """The first error in a push/pull progress stream, or None."""
    for item in items:
        if "error" in item or "errorDetail" in item:
            detail = item.get("errorDetail") or {}
            return str(item.get("error") or detail.get("message") or item).strip()
    return None


def push_image(image: str, registry: str, *, timeout: int = 1800, base_url: str | None = None) -> str:
    """Tag the local image `image` (NAME:TAG) as REGISTRY/NAME:TAG and push it; returns that reference.

    Raises:
        RegistryError: the registry refused the push or could not be reached (the message says what to check).
        ImageNotFoundError: there is no local image `image`.
    """
    from envs.errors import RegistryError  # appended after the module's imports

    ref = registry_ref(image, registry)
    repo, tag = ref.rsplit(":", 1)
    client = connect(base_url, timeout=timeout)
    try:
        try:
            client.api.tag(image, repo, tag=tag)
        except docker.errors.ImageNotFound as e:
            msg = f"No local image {image} to push to {registry}; build it first (or check the tag)."
            raise ImageNotFoundError(msg) from e
        try:
            error = _stream_errors(client.api.push(repo, tag=tag, stream=True, decode=True))
        except _ENGINE_ERRORS as e:
            error = f"{type(e).__name__}: {e}"
        if error is not None:
            with suppress(*_ENGINE_ERRORS):
                client.api.remove_image(ref)  # only the tag: the image keeps its own name
            msg = f"Pushing {image} to {registry} as {ref} failed: {error}. {_registry_advice(registry)}"
            raise RegistryError(msg)
    finally:
        client.close()
    return ref


def pull_image(ref: str, *, timeout: int = 1800, base_url: str | None = None) -> str:
    """Pull `ref` (REGISTRY/NAME:TAG) onto this engine; returns the image id.

    Raises:
        RegistryError: the registry could not be reached or has no such image.
    """
    from envs.errors import RegistryError  # appended after the module's imports

    name, tag = docker.utils.parse_repository_tag(ref)
    client = connect(base_url, timeout=timeout)
    try:
        error = _stream_errors(client.api.pull(name, tag=tag or "latest", stream=True, decode=True))
        if error is None:
            return str(client.api.inspect_image(ref)["Id"])
    except _ENGINE_ERRORS as e:
        error = f"{type(e).__name__}: {e}"
    finally:
        client.close()
    registry = name.split("/", 1)[0] if _has_host(name.split("/", 1)[0]) else "docker.io"
    msg = (f"Pulling {ref} failed: {error}. Check that it was pushed (`curl http://{registry}/v2/"
           f"{name.partition('/')[2]}/tags/list`). {_registry_advice(registry)}")
    raise RegistryError(msg)
