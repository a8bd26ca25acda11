"""Builds cannot poison each other through the package cache: each sandbox sees the shared cache through
an overlay of its own, and only trusted sandboxes (which run no project code) write into it."""
from __future__ import annotations

from pathlib import Path

import docker
import pytest

from envs.base import Limits
from envs.docker import DockerFactory
from envs.docker.cachelayer import LAYERS_DIR
from envs.errors import SandboxLimitError

pytestmark = pytest.mark.docker

POISON = "echo 'raise SystemExit(\"poisoned\")' >> /cache/uv/_pytest/__init__.py && echo x > /cache/uv/canary"


def layer_volumes(cache: Path) -> set[str]:
    """The cache-layer volumes over `cache` (other builds on this engine may come and go meanwhile)."""
    client = docker.from_env()
    try:
        volumes = client.volumes.list(filters={"label": "autoinstall.kind=cache-layer"})
        lower = f"lowerdir={cache.resolve()},"
        return {v.name for v in volumes if lower in ((v.attrs.get("Options") or {}).get("o") or "")}
    finally:
        client.close()


def test_what_a_build_writes_into_the_cache_never_reaches_the_next_one(base_image: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "uv" / "_pytest").mkdir(parents=True)
    (cache / "uv" / "_pytest" / "__init__.py").write_text("CLEAN = True\n")
    factory = DockerFactory(cache_dir=cache)
    with factory.sandbox(base_image, network=False, cache=True) as hostile:
        result = hostile.exec(f"{POISON} && cat /cache/uv/_pytest/__init__.py")
        assert result.ok and "poisoned" in result.stdout, result.output  # it may write: into its own layer
        assert hostile.exec("printenv UV_CACHE_DIR").stdout.strip() == "/cache/uv"
        assert len(layer_volumes(cache)) == 1
    assert (cache / "uv" / "_pytest" / "__init__.py").read_text() == "CLEAN = True\n"
    assert not (cache / "uv" / "canary").exists()
    with factory.sandbox(base_image, network=False, cache=True) as later:
        seen = later.exec("cat /cache/uv/_pytest/__init__.py; ls /cache/uv")
        assert seen.stdout.split() == ["CLEAN", "=", "True", "_pytest"], seen.output
    assert layer_volumes(cache) == set(), "every private cache layer is removed with its sandbox"
    assert not any((cache.parent / LAYERS_DIR).iterdir())


def test_a_trusted_sandbox_fills_the_shared_cache(base_image: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    factory = DockerFactory(cache_dir=cache)
    with factory.sandbox(base_image, network=False, cache=True, trusted=True) as warm:
        assert warm.exec("mkdir -p /cache/uv && echo wheel > /cache/uv/fetched").ok
    assert (cache / "uv" / "fetched").read_text() == "wheel\n"
    with factory.sandbox(base_image, network=False, cache=True) as build:
        assert build.exec("cat /cache/uv/fetched").stdout == "wheel\n"


def test_what_a_build_writes_under_cache_counts_against_its_disk_limit(base_image: str, tmp_path: Path) -> None:
    """The private cache layer is a volume (invisible to the engine's SizeRw): the watch counts its allocated
    blocks, so /cache is no way around --disk-mb; a sparse file there (within the per-file cap) counts nothing."""
    factory = DockerFactory(cache_dir=tmp_path / "cache", limits=Limits(disk_mb=150))
    with factory.sandbox(base_image, network=False, cache=True) as sb:
        sb.config.disk_poll_s = 0.3
        assert sb.exec("truncate -s 140M /cache/sparse && sleep 2 && echo kept").stdout == "kept\n"
        with pytest.raises(SandboxLimitError, match=r"MiB under /cache\), over Limits.disk_mb=150"):
            sb.exec("for i in $(seq 20); do dd if=/dev/zero of=/cache/fill$i bs=1M count=100 status=none; done; "
                    "sync; sleep 5", timeout=90)
