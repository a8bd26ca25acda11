"""The record of a toolchain an environment carries besides its Debian suite's (EnvSpec.toolchains)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ToolchainOrigin = Literal["host", "registry", "debian"]


class ToolchainRecord(BaseModel):
    """One compiler or runtime the environment uses instead of its base suite's: which, and where it came from."""

    model_config = ConfigDict(extra="forbid")
    name: str
    """"rust", "go", "node", "java"."""
    version: str
    """Its full version, e.g. "1.95.0"."""
    origin: ToolchainOrigin
    """host: copied from this machine's installation into the base image (envs/host_toolchains.py); registry:
    fetched inside the sandbox from a package registry by a recorded variable (Go's GOTOOLCHAIN); debian: a Debian
    suite's packages installed on the base image (envs/debian_layer.py)."""
    source: str
    """Where exactly: the host folder and the digest of its compiled files, the registry module, or
    "debian:SUITE (codename, the suite's Release date)"."""
    home: str = ""
    """Where the image keeps it (its bin/ leads PATH); empty when the tool itself decides (GOTOOLCHAIN)."""
    suite: str = ""
    """debian: the suite the packages come from ("testing"; the base suite's own name for one of its packages)."""
    packages: dict[str, str] = Field(default_factory=dict)
    """debian: every package the layer installed or replaced, at its exact version (those asked for, then what
    came along with them)."""
    recipe: str = ""
    """debian: the Dockerfile instructions that install it on `base` (apt source, pin, exact versions, checks),
    which the replay Dockerfile repeats."""
    base: str = ""
    """debian: the image the layer was built on."""
