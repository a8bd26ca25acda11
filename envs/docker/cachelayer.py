"""Package caches that one build cannot poison for the next: the shared cache is the read-only lower layer
of an overlay volume private to each sandbox, so what a sandbox writes there goes away with it."""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

import docker
import docker.errors

from envs.base import LABEL
from envs.docker.engine import KIND_LABEL, owner_labels

LAYERS_DIR = "cache-layers"
"""Beside the shared cache: one folder per live sandbox with its overlay's upper and work directories."""


def create_cache_layer(api: docker.APIClient, cache_dir: Path) -> tuple[str, Path]:
    """A new overlay volume over `cache_dir`; returns (volume name, its layer folder on the host)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    name = f"autoinstall-cache-{uuid.uuid4().hex[:12]}"
    layer = cache_dir.resolve().parent / LAYERS_DIR / name
    (layer / "upper").mkdir(parents=True)
    (layer / "work").mkdir()
    options = f"lowerdir={cache_dir.resolve()},upperdir={layer / 'upper'},workdir={layer / 'work'}"
    api.create_volume(name, driver="local", driver_opts={"type": "overlay", "device": "overlay", "o": options},
                      labels={LABEL: "1", KIND_LABEL: "cache-layer", **owner_labels()})
    return name, layer


def remove_cache_layer(api: docker.APIClient, name: str, layer: Path, in_use_wait_s: float = 10.0) -> None:
    """Drop the volume and what the sandbox wrote into it; never raises for what is already gone. A volume
    still in use (its container being removed by another thread: an interrupt) is waited for a while."""
    deadline = time.monotonic() + in_use_wait_s
    while True:
        try:
            api.remove_volume(name, force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as e:
            if e.status_code != 409 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
            continue
        break
    shutil.rmtree(layer, ignore_errors=True)
