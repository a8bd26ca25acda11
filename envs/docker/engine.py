"""Connecting to the Docker engine, and what every part of envs/docker shares (paths, labels, errors)."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

import docker
import docker.errors
import requests

from envs.base import LABEL
from envs.catalog_owners import owner_alive
from envs.errors import EngineUnavailableError, EnvError

PROXY_VARS = tuple(v for n in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY") for v in (n, n.lower()))
CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL"]
"""Capabilities kept: what apt (privilege drop to _apt) and pip need; everything else is dropped."""
SNAPSHOT_REPO = "autoinstall-snapshot"
KIND_LABEL = f"{LABEL}.kind"
TASK_KIND = "task"
"""KIND_LABEL of a task's start image (envs/grading/image.py): rebuildable from its task, removed with its parent."""
OWNER_LABEL = f"{LABEL}.owner"
"""host:pid:engine of the process that made a container, snapshot or cache layer: `cleanup` leaves those of
another process that still runs alone (a concurrent build), and removes those whose process is gone."""


def owner_labels() -> dict[str, str]:
    """The owner label of what this process creates on the engine."""
    return {OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}:engine"}


def owned_by_another_live_process(labels: Mapping[str, str] | None) -> bool:
    """Whether `labels` name an owner that is another process still running (this process's own things, and
    those of processes that are gone, are not: their owner cannot be using them)."""
    owner = (labels or {}).get(OWNER_LABEL, "")
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if not owner or (host == socket.gethostname() and pid == str(os.getpid())):
        return False
    return owner_alive(owner)
_ENGINE_ERRORS = (
    requests.exceptions.RequestException,
    docker.errors.DockerException,
    ConnectionError,
    TimeoutError,
)


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
