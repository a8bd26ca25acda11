"""One build configuration: what the CLI, batch and debug pass down, with the defaults the CLI shows.

`BuildOptions` (with `Budgets`) says how one environment is built; `BatchOptions` runs many with one
`BuildOptions`. The CLI's flags take their defaults from these models.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from envs.base import Limits, SandboxFactory
from envs.home import cache_dir
from envs.spec import DEFAULT_MAX_DESELECTED, DEFAULT_THRESHOLD


class Budgets(BaseModel):
    """Limits on how hard phase 2 tries."""

    model_config = ConfigDict(extra="forbid")
    max_repairs: int = 12
    """Repairs the model may apply before the build gives up."""
    wall_s: float = 1800.0
    """Seconds of install and repair."""
    step_timeout_s: float = 900.0
    """Seconds one install command may run (one still working at the end runs once more with up to twice this,
    within what `wall_s` has left: autoinstall/ecosystems/overrun.py)."""
    test_timeout_s: float = 900.0
    """Seconds one run of the test suite may take."""
    per_test_timeout_s: float = 120.0
    """Seconds one test may take (pytest): over it, the test fails, and the install loop deselects it (hangs)."""
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
    """Revision to check out (branch, tag, sha); None: HEAD."""
    out_dir: Path | None = None
    """Where the spec, Dockerfile, context and logs go; default under autoinstall_home()/envs."""
    budgets: Budgets = Field(default_factory=Budgets)
    """How hard phase 2 tries."""
    threshold: float = Field(default=DEFAULT_THRESHOLD, ge=0.0, le=1.0)
    """Pass rate needed to call an environment verified."""
    max_deselected: float = Field(default=DEFAULT_MAX_DESELECTED, ge=0.0, le=1.0)
    """Largest share of the suite's default collection that may be deselected for `verified` (else partial)."""
    verify_runs: int = 2
    """Runs of the test suite when verifying (results differing between runs mark tests flaky)."""
    latest_deps: bool = False
    """Resolve dependencies with today's releases; by default they resolve as of the commit date (build
    tooling exempt), see autoinstall/ecosystems/python/timemachine.py."""
    rebuild_check: bool = False
    """Build the replay Dockerfile and verify the result too."""
    python: str | None = None
    """Force an interpreter version instead of the plan's."""
    limits: Limits = Field(default_factory=Limits)
    """Resources each sandbox may use."""


class BatchOptions(BaseModel):
    """How to run a batch."""

    model_config = ConfigDict(extra="forbid")
    jobs: int = Field(default=2, ge=1)
    """Builds running at once."""
    retry_failed: bool = False
    """Build again the jobs whose record is failed (verified ones are always kept)."""
    build: BuildOptions = Field(default_factory=BuildOptions)
    """How each repository is built (model, endpoint, budgets, ...); entries set commit and out_dir."""


def docker_factory(limits: Limits | None = None, log: Callable[[str], None] | None = None) -> SandboxFactory:
    """Sandboxes on the local Docker engine, with the host's package cache and our base images.

    `log` receives the output of base image builds (unless the caller of `base_image` passes its own).
    """
    # Imported here: the docker SDK is only loaded by commands that run something.
    from envs.baseimage import ensure_base_image
    from envs.docker import DockerFactory

    default_log = log

    def base_images(*, python: str, log: Callable[[str], None] | None = None,
                    packages: tuple[str, ...] = (), toolchains: tuple[str, ...] = ()) -> str:
        return ensure_base_image(python=python, log=log or default_log, packages=packages, toolchains=toolchains)

    return DockerFactory(limits, cache_dir(), base_images)
