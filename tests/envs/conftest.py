"""Fixtures for the sandbox tests: one sandbox per backend per module, with small limits."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from types import ModuleType

import pytest

from envs.base import Limits, Sandbox

SMALL = Limits(cpus=1.0, memory_mb=512, pids=256, disk_mb=4096)
RUN_LABEL = {"autoinstall.test": uuid.uuid4().hex[:12]}
"""Put on every container and snapshot these tests create, so teardown removes exactly those."""


def parquet() -> ModuleType:
    """pyarrow.parquet, which the verl export needs: a failure under CI, a skip elsewhere when missing."""
    try:
        import pyarrow.parquet as pq  # local: only the verl export's tests need pyarrow
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI is set but pyarrow is missing (the verl export needs it)", pytrace=False)
        pytest.skip("pyarrow is not installed")
    return pq


def make_sandbox(request: pytest.FixtureRequest, kind: str, **config: object) -> Sandbox:
    """A not-yet-started sandbox of `kind`; docker ones start from the session's base image."""
    from envs import get_sandbox

    if kind == "docker":
        config.setdefault("image", request.getfixturevalue("base_image"))
        config["labels"] = {**RUN_LABEL, **config.get("labels", {})}  # type: ignore[dict-item]
        request.getfixturevalue("remove_test_leftovers")
    return get_sandbox(kind, **config)


@pytest.fixture(scope="session")
def remove_test_leftovers(docker_engine: None) -> Iterator[None]:
    """After the session, remove the containers and snapshot images these tests labelled."""
    yield
    from envs.docker import cleanup

    report = cleanup(labels=RUN_LABEL)
    assert not report.errors, report.errors


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A started sandbox shared by the tests of one module, for each backend."""
    with make_sandbox(request, request.param, limits=SMALL) as sb:
        yield sb
