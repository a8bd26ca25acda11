"""Batch builds as Ray tasks on a cluster whose nodes each have a Docker engine (`batch --executor ray`).

The runner keeps everything that touches the catalog on the driver (claim, skip, record, Ctrl-C);
`RayExecutor.build` is its build function. Each build runs as one task on a node that advertises the `docker`
resource: the node builds into a scratch directory, pushes a verified image to the registry when one is
given, and returns the spec with the small files of its directory (spec.json, Dockerfile, logs/, context/)
so the driver can write them under `<catalog>/envs/<id>` whichever node built it. A node must have
autoinstall installed, a Docker engine, and access to the repositories (URLs, or paths that exist on every
node). Ray is optional: it is imported only here, when the executor starts.
"""
from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import threading
import traceback
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

from autoinstall.batch.runner import BuildFn, Report
from autoinstall.options import BatchOptions, BuildOptions
from envs.errors import EnvError
from envs.spec import EnvSpec, Failure

DOCKER_RESOURCE = "docker"
INSTALL_RAY = "install the ray extra: `uv sync --extra ray` (or `pip install ray`)"
FORWARDED_EVENTS = ("phase", "step", "repair")
"""The build events sent back to the driver's display (the rest stay on the node)."""
POLL_S = 0.5
CANCEL_WAIT_S = 60.0
"""After Ctrl-C, the longest wait for Ray to settle a cancelled task; the task gets a KeyboardInterrupt, so
its sandboxes are removed on the way out."""
FILE_CAP = 8 << 20
TOTAL_CAP = 256 << 20
"""Bytes of one file / of a whole env directory sent back to the driver; what is past them is listed in
logs/ray-omitted.txt and stays on the node only until the scratch directory is removed."""


class Progress(Protocol):
    """Where nodes put (task key, event, text) for the driver: a `ray.util.queue.Queue`."""

    def put_nowait(self, item: tuple[str, str, str]) -> None: ...


class ClusterError(EnvError):
    """The Ray cluster cannot run the builds (Ray missing, no cluster, no Docker nodes, a worker died)."""


class RayOptions(BaseModel):
    """Where and how the Ray executor runs builds."""

    model_config = ConfigDict(extra="forbid")
    address: str | None = None
    """The cluster to join (`ray.init(address=...)`: `auto`, `HOST:6379` or `ray://HOST:10001`); None starts a
    Ray instance on this machine."""
    registry: str | None = None
    """HOST:PORT to push each verified image to; the record's image becomes the pushed REGISTRY/NAME:TAG."""
    local_slots: int = Field(default=BatchOptions.model_fields["jobs"].default, ge=1)
    """For an instance started here: how many builds run at once (the `docker` resource it advertises);
    by default as many as a local batch runs."""
    num_cpus: float = Field(default=1.0, gt=0)
    """CPUs one build task reserves on its node."""
    resource: str = DOCKER_RESOURCE
    """The custom resource that nodes with a Docker engine advertise; each build takes one."""

    @field_validator("registry")
    @classmethod
    def _known_registry(cls, value: str | None) -> str | None:
        # Imported here: the docker SDK loads only when a registry is given.
        from envs.docker import registry_ref

        if value is not None:
            registry_ref("autoinstall-env/check:ok", value)  # raises RegistryError, which names the fix
        return value


class NodeResult(BaseModel):
    """What a build task sends back to the driver."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    node: str
    spec: EnvSpec | None = None
    error: Exception | None = None
    """What the build raised (SourceError, EnvError, ...); the runner records it as for local builds."""
    files: dict[str, bytes] = Field(default_factory=dict)
    """The env directory's files by relative path."""
    omitted: list[str] = Field(default_factory=list)


def import_ray() -> ModuleType:
    """The ray module, or a ClusterError that says how to install it.

    Ray's `uv run` support would make every worker re-create the project environment from a copy of the
    current directory (slow; on these machines the workers never came up). Workers use the driver's
    interpreter (a local instance) or the nodes' own installation instead, unless
    RAY_ENABLE_UV_RUN_RUNTIME_ENV is set before this call.
    """
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    try:
        import ray  # optional, and slow to import: only here, when the executor starts
    except ImportError as e:
        msg = f"--executor ray needs Ray, which is not installed: {INSTALL_RAY}."
        raise ClusterError(msg) from e
    return ray


# --- on the node ------------------------------------------------------------------------------------------

def _node_reporter(key: str, progress: Progress | None, node: str) -> Report:
    def report(event: str, text: str) -> None:
        if progress is None or event not in FORWARDED_EVENTS:
            return
        try:
            progress.put_nowait((key, event, f"{text} on {node}" if event == "phase" else text))
        except Exception:  # noqa: BLE001, S110 (progress is best effort; the build goes on without it)
            pass

    return report


def _push(spec: EnvSpec, registry: str, node: str, report: Report) -> None:
    """Push a verified image; a push that fails turns the spec into a failed one that says why."""
    # Imported here: on the node, the docker SDK loads only when there is something to push.
    from envs.docker import push_image

    if spec.status != "verified" or not spec.image:
        return
    report("phase", f"push to {registry}")
    try:
        spec.image = push_image(spec.image, registry)
    except EnvError as e:
        spec.status = "failed"
        spec.failure = Failure(failure_class="infrastructure", evidence=str(e),
                               message=f"verified, but the image was not pushed (it stays on node {node} as "
                                       f"{spec.image}): {e}")


def _collect(out: Path) -> dict[str, Any]:
    files: dict[str, bytes] = {}
    omitted: list[str] = []
    total = 0
    for path in sorted(p for p in out.rglob("*") if p.is_file() and not p.is_symlink()):
        rel, size = path.relative_to(out).as_posix(), path.stat().st_size
        if size > FILE_CAP or total + size > TOTAL_CAP:
            omitted.append(f"{rel} ({size} bytes)")
            continue
        files[rel] = path.read_bytes()
        total += size
    return {"files": files, "omitted": omitted}


def build_on_node(repo: str, options: dict[str, Any], registry: str | None, key: str,
                  progress: Progress | None, build: BuildFn | None = None) -> NodeResult:
    """The Ray task: build `repo` into a scratch directory on this node, push, and return the results."""
    if build is None:
        # Imported here: the pipeline loads git and docker; tests pass a fake build instead.
        from autoinstall.pipeline import build_environment as build
    node = socket.gethostname()
    report = _node_reporter(key, progress, node)
    out = Path(tempfile.mkdtemp(prefix="autoinstall-ray-"))
    try:
        try:
            spec = build(repo, BuildOptions.model_validate({**options, "out_dir": out}), report)
            if registry:
                _push(spec, registry, node, report)
                (out / "spec.json").write_text(spec.model_dump_json(indent=2))
        except Exception as e:  # noqa: BLE001 (sent back and recorded by the driver with the logs so far)
            (out / "logs").mkdir(parents=True, exist_ok=True)
            (out / "logs" / "node-error.txt").write_text(f"on node {node}:\n" + "".join(
                traceback.format_exception(e)))
            return NodeResult(node=node, error=e, **_collect(out))
        return NodeResult(node=node, spec=spec, **_collect(out))
    finally:
        shutil.rmtree(out, ignore_errors=True)


# --- on the driver ----------------------------------------------------------------------------------------

def _materialize(result: NodeResult, env_dir: Path) -> None:
    """Write the node's files under env_dir (paths that would leave it are refused)."""
    root = env_dir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in result.files.items():
        target = (root / rel).resolve()
        if not target.is_relative_to(root) or target == root:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "ray-node.txt").write_text(f"built on node {result.node}\n")
    if result.omitted:
        (logs / "ray-omitted.txt").write_text("too large to send back from the node:\n"
                                              + "\n".join(result.omitted) + "\n")


def _probe(address: str) -> None:
    """Fail fast when nothing listens at HOST:PORT (ray.init would retry for minutes); Ray finds `auto`."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as e:
        msg = f"nothing answers at {hostport} ({e})"
        raise ConnectionError(msg) from e


class RayExecutor:
    """Runs the batch's builds as Ray tasks; use as a context manager and pass `.build` to `run_batch`."""

    def __init__(self, options: RayOptions | None = None, *, build: BuildFn | None = None) -> None:
        self.options = options or RayOptions()
        self._build_fn = build
        """What each node runs (default: build_environment); tests pass `fake_build`."""
        self._started = False
        self._queue: Any = None
        self._task: Any = None
        self._events: dict[str, list[tuple[str, str]]] = {}
        """Progress of the running builds, by task key."""
        self._lock = threading.Lock()

    def __enter__(self) -> Self:
        ray = import_ray()
        if not ray.is_initialized():
            self._init(ray)
        try:
            if self.slots() < 1:
                msg = (f"No node of the Ray cluster advertises the {self.options.resource!r} resource, so no "
                       "build could run. On each machine with a Docker engine start Ray with it, e.g. "
                       f"`ray start --address HEAD:6379 --resources '{{\"{self.options.resource}\": 2}}'`.")
                raise ClusterError(msg)
            from ray.util.queue import Queue  # part of the optional ray, imported with it

            self._queue = Queue(maxsize=10_000, actor_options={"num_cpus": 0})
            self._task = ray.remote(build_on_node).options(
                num_cpus=self.options.num_cpus, resources={self.options.resource: 1}, max_retries=0)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _init(self, ray: ModuleType) -> None:
        common: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
        address = self.options.address
        try:
            if address:
                _probe(address)
                ray.init(address=address, **common)
            else:
                slots = self.options.local_slots
                ray.init(address="local", num_cpus=max(os.cpu_count() or 1, slots),
                         resources={self.options.resource: slots},
                         include_dashboard=False, **common)
        except Exception as e:
            where = (f"connect to the Ray cluster at {address} (is `ray start --head` running there, and is "
                     "this the address `ray status` shows? A cluster with token authentication, Ray's "
                     "default, also needs RAY_AUTH_MODE=token and its token in ~/.ray/auth_token or "
                     "RAY_AUTH_TOKEN)"
                     if address else "start a local Ray instance")
            msg = f"Could not {where}: {type(e).__name__}: {e}"
            raise ClusterError(msg) from e
        self._started = True

    def __exit__(self, *exc: object) -> None:
        ray = import_ray()
        if self._queue is not None and ray.is_initialized():
            try:
                self._queue.shutdown(force=True)
            except Exception:  # noqa: BLE001, S110 (the queue actor may be gone with its node)
                pass
            self._queue = None
        if self._started:
            ray.shutdown()
            self._started = False

    def slots(self) -> int:
        """How many builds the cluster can run at once: its total `docker` resource."""
        return int(import_ray().cluster_resources().get(self.options.resource, 0))

    def build(self, repo: str, options: BuildOptions, report: Report) -> EnvSpec:
        """Build `repo` on a node and bring its env directory to `options.out_dir` (the runner's BuildFn).

        Raises:
            ClusterError: the task or its node failed.
            Exception: whatever the build raised on the node (SourceError, EnvError, ...).
        """
        # Imported here: only builds without an out_dir (not the runner's) need it.
        from autoinstall.record import default_env_dir

        if self._task is None:
            msg = "RayExecutor.build runs inside `with RayExecutor(...) as executor:`"
            raise ClusterError(msg)
        ray = import_ray()
        key = uuid.uuid4().hex
        payload = options.model_dump(mode="json", exclude={"out_dir"})
        ref = self._task.remote(repo, payload, self.options.registry, key, self._queue, self._build_fn)
        with self._lock:
            self._events[key] = []
        report("phase", f"queued for a node with {self.options.resource}")
        try:
            self._wait(ray, ref, key, report)
        except BaseException:  # Ctrl-C (BuildInterrupted): stop the remote build too
            ray.cancel(ref)
            ray.wait([ref], timeout=CANCEL_WAIT_S)
            raise
        finally:
            with self._lock:
                self._events.pop(key, None)
        try:
            result: NodeResult = ray.get(ref)
        except ray.exceptions.RayError as e:
            msg = (f"The Ray task building {repo} failed ({type(e).__name__}: {e}). Check the node with "
                   "`ray status` and its logs; the entry is recorded as failed (`--retry-failed` builds it "
                   "again).")
            raise ClusterError(msg) from e
        env_dir = options.out_dir or default_env_dir(key, "ray")
        _materialize(result, env_dir)
        if result.error is not None:
            raise result.error
        spec = result.spec
        if spec is None:
            msg = f"The node {result.node} sent back neither a spec nor an error for {repo}."
            raise ClusterError(msg)
        spec.env_dir = str(env_dir.resolve())
        (env_dir / "spec.json").write_text(spec.model_dump_json(indent=2))
        return spec

    def _wait(self, ray: ModuleType, ref: object, key: str, report: Report) -> None:
        while True:
            ready, _ = ray.wait([ref], timeout=POLL_S)
            for event, text in self._take(key):
                report(event, text)
            if ready:
                return
            report("ray", "waiting")  # lets the runner's Ctrl-C reach this thread while nothing else happens

    def _take(self, key: str) -> list[tuple[str, str]]:
        """This build's progress events, after moving everything in the shared queue to per-build lists."""
        with self._lock:
            try:
                size = self._queue.size()
                items = self._queue.get_nowait_batch(size) if size else []
            except Exception:  # noqa: BLE001 (progress is best effort)
                items = []
            for item_key, event, text in items:
                if item_key in self._events:  # late events of finished builds are dropped
                    self._events[item_key].append((event, text))
            taken, self._events[key] = self._events.get(key, []), []
            return taken
