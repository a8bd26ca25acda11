"""DockerSandboxConfig, and the locked-down container a DockerSandbox runs in (limits, mounts, env)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import docker
import docker.errors
import docker.types
from pydantic import Field

from envs.base import LABEL, SandboxSpec
from envs.docker.channel import CHANNEL_MOUNT
from envs.docker.engine import CAPS, KIND_LABEL, PROXY_VARS, _engine_info, owner_labels
from envs.docker.trust import CA_DIR, CA_ENV, default_ca_bundle, trust_dir


class DockerSandboxConfig(SandboxSpec):
    """How to start a DockerSandbox."""

    workdir: str = "/workspace"
    """Absolute path of the workspace inside the container."""
    ca_bundle: Path | None = Field(default_factory=default_ca_bundle)
    """Host CA bundle trusted by every client (envs/docker/trust.py): its trust files are mounted read-only at
    CA_DIR and CA_ENV points pip, uv, npm, cargo, go, maven, apt, git, curl and wget at them."""
    pass_proxy_env: bool = True
    """Carry HTTP_PROXY/HTTPS_PROXY/NO_PROXY (both cases) from the host environment into the container."""
    cache_dir: Path | None = None
    """Host directory of the package caches, seen at /cache (UV_CACHE_DIR, PIP_CACHE_DIR, Go's and Cargo's:
    see `go_cache_env`, `cargo_cache_env`)."""
    cache_mode: Literal["layered", "shared"] = "layered"
    """`layered`: the sandbox sees the cache through an overlay of its own (the shared cache is read-only
    underneath; what it writes vanishes with it), so untrusted code cannot poison later builds. `shared`:
    the cache itself, read-write: only for trusted steps that run no project code (filling the cache)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra labels on the container and its snapshots."""
    base_url: str | None = None
    """Docker engine address; default DOCKER_HOST or the local socket."""
    tmp_mb: int = 1024
    """Size of the tmpfs on /tmp (counts against the memory limit)."""
    disk_poll_s: float = 3.0
    """How often the disk watchdog measures what the container wrote."""
    pull: Literal["never", "missing"] = "missing"
    """Pull a REGISTRY/NAME:TAG image that is not on this engine (e.g. pushed by `batch --executor ray`)."""
    channel: bool = False
    """Give the sandbox a direct channel (envs/docker/channel.py): a private host directory mounted read-only
    at /run/autoinstall-tools, where the tool server connects to the host's Unix socket: calls skip dockerd."""


def create_container(client: docker.DockerClient, c: DockerSandboxConfig, image: str,
                     cache_volume: str | None = None, network: str = "bridge",
                     labels: dict[str, str] | None = None, channel: Path | None = None) -> str:
    """Create (not start) a container running `sleep infinity` from `image` under `c`; returns its id.

    `cache_volume`: the sandbox's own overlay over `c.cache_dir` (layered mode), mounted at /cache.
    `channel`: the sandbox's private channel directory on the host, mounted at CHANNEL_MOUNT.
    """
    api = client.api
    volumes = {}
    if c.ca_bundle:
        volumes[str(trust_dir(c.ca_bundle))] = {"bind": CA_DIR, "mode": "ro"}
    if cache_volume:
        volumes[cache_volume] = {"bind": "/cache", "mode": "rw"}
    elif c.cache_dir and c.cache_mode == "shared":
        c.cache_dir.mkdir(parents=True, exist_ok=True)
        volumes[str(c.cache_dir.resolve())] = {"bind": "/cache", "mode": "rw"}
    if channel is not None:
        volumes[str(channel)] = {"bind": CHANNEL_MOUNT, "mode": "ro"}
    info = _engine_info(client, c.base_url)
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
        # No single file outgrows the whole budget, written or sparse (`truncate -s 6G` would become 6 GB of real
        # disk at `docker commit`): the kernel refuses it at once, where the watchdog only polls.
        ulimits=[docker.types.Ulimit(name="fsize", soft=c.limits.disk_mb * 2**20, hard=c.limits.disk_mb * 2**20)],
        nano_cpus=int(min(c.limits.cpus, ncpu) * 1e9),
        tmpfs={"/tmp": f"rw,exec,nosuid,nodev,size={c.tmp_mb}m,mode=1777"},
        binds=volumes,
        network_mode=network,
    )
    spec = {
        "command": ["sleep", "infinity"],
        "working_dir": c.workdir,
        # No environment of the sandbox's own: `docker commit` would merge it into every snapshot, and the
        # environment image would keep the install-time caches (/cache), proxies and GOPROXY. Each exec gets it.
        "labels": {LABEL: "1", KIND_LABEL: "sandbox", **owner_labels(), **c.labels, **(labels or {})},
    }
    try:
        return api.create_container(image, host_config=host_config, **spec)["Id"]
    except docker.errors.APIError as e:
        if not quota or "storage-opt" not in str(e.explanation):
            raise
        host_config.pop("StorageOpt", None)  # xfs without pquota: the watchdog alone enforces disk_mb
        return api.create_container(image, host_config=host_config, **spec)["Id"]


def container_env(c: DockerSandboxConfig) -> dict[str, str]:
    """The environment of every command run in the sandbox (given per exec, never to the container, so that no
    snapshot keeps it): host proxies, the CA bundle, the caches, then `c.env`."""
    env = {k: os.environ[k] for k in PROXY_VARS if c.pass_proxy_env and k in os.environ}
    if c.ca_bundle:
        env |= CA_ENV
    if c.cache_dir:
        env |= {"UV_CACHE_DIR": "/cache/uv", "PIP_CACHE_DIR": "/cache/pip", "UV_LINK_MODE": "copy"}
        env |= go_cache_env(c.cache_mode) | cargo_cache_env()
        env |= {"npm_config_cache": "/cache/npm"}  # npm's content-addressed cache: safe to share read-only
    return env | c.env


GO_MODULE_CACHE = "/cache/go/mod"
GO_PROXY = "https://proxy.golang.org,direct"


def go_cache_env(mode: str) -> dict[str, str]:
    """Go's module cache under /cache. Modules must end up in the image (tests run offline from it), so a
    layered sandbox keeps its own module cache and reads the shared one as the first module proxy; a trusted
    (shared) sandbox downloads into the shared one itself. The build cache stays the image's own (root's
    default GOCACHE): the build step, the step that compiles the test binaries into the image, the checks and
    the tests compile the standard library and each package once between them, not once per cache."""
    if mode == "shared":
        return {"GOMODCACHE": GO_MODULE_CACHE}
    return {"GOPROXY": f"file://{GO_MODULE_CACHE}/cache/download,{GO_PROXY}"}


CARGO_HOME_CACHE = "/cache/cargo"


def cargo_cache_env() -> dict[str, str]:
    """Cargo's registry (index and .crate downloads) under /cache, in both modes: a layered sandbox reads the
    shared one and its own downloads vanish with it, a trusted one fills it. The crates a build needs still
    end up in the image: the Rust ecosystem vendors them (`cargo vendor` into the image, a `[source]`
    replacement in /.cargo/config.toml), so an offline sandbox without /cache builds from the image alone."""
    return {"CARGO_HOME": CARGO_HOME_CACHE}
