"""One build configuration: what the CLI, batch and debug pass down, with the defaults the CLI shows."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from envs.base import Limits, SandboxFactory
from envs.home import cache_dir
from envs.spec import DEFAULT_THRESHOLD


class Budgets(BaseModel):
    """Limits on how hard phase 2 tries."""

    model_config = ConfigDict(extra="forbid")
    max_repairs: int = 12
    """Repairs the model may apply before the build gives up."""
    wall_s: float = 1800.0
    """Seconds of install and repair."""
    step_timeout_s: float = 900.0
    """Seconds one install command may run."""
    test_timeout_s: float = 900.0
    """Seconds one run of the test suite may take."""
    threshold: float = DEFAULT_THRESHOLD
    """Pass rate the install loop works towards (the build's threshold is copied here)."""


class BuildOptions(BaseModel):
    """How to build one environment."""

    model_config = ConfigDict(extra="forbid")
    model: str = "embedded"
    """"embedded" or "openai:NAME"."""
    base_url: str | None = None
    """Endpoint of an OpenAI-compatible server, for openai:NAME models."""
    commit: str | None = None
    out_dir: Path | None = None
    """Where the spec, Dockerfile, context and logs go; default under autoinstall_home()/envs."""
    budgets: Budgets = Field(default_factory=Budgets)
    threshold: float = DEFAULT_THRESHOLD
    """Pass rate needed to call an environment verified."""
    verify_runs: int = 2
    as_of_commit: bool = False
    """Resolve dependencies as of the commit date (uv --exclude-newer)."""
    rebuild_check: bool = False
    """Build the replay Dockerfile and verify the result too."""
    python: str | None = None
    """Force an interpreter version instead of the plan's."""
    limits: Limits = Field(default_factory=Limits)


def docker_factory(limits: Limits | None = None) -> SandboxFactory:
    """Sandboxes on the local Docker engine, with the host's package cache and our base images."""
    # Imported here: the docker SDK is only loaded by commands that run something.
    from envs.baseimage import ensure_base_image
    from envs.docker import DockerFactory

    return DockerFactory(limits, cache_dir(), ensure_base_image)
