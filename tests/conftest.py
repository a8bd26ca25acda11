"""Shared fixtures. Docker-backed fixtures skip when no engine answers, but fail when CI is set:
CI must prove the Docker path, never silently skip it."""
from __future__ import annotations

import os

import pytest


def _need_docker(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but Docker is unavailable: {reason}", pytrace=False)
    pytest.skip(f"Docker unavailable: {reason}")


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """A running Docker engine, or skip (fail under CI)."""
    from envs.docker import check_engine
    from envs.errors import EngineUnavailableError

    try:
        check_engine()
    except EngineUnavailableError as e:
        _need_docker(str(e))


@pytest.fixture(scope="session")
def base_image(docker_engine: None) -> str:
    """The default base image (Python 3.11), built once per machine and reused across tests."""
    from envs.baseimage import ensure_base_image

    return ensure_base_image(python="3.11")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "docker_engine" in getattr(item, "fixturenames", ()) or "base_image" in getattr(
            item, "fixturenames", ()
        ):
            item.add_marker(pytest.mark.docker)
