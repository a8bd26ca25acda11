"""The record of a toolchain an environment carries besides its Debian suite's (EnvSpec.toolchains)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

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
    fetched inside the sandbox from a package registry by a recorded variable (Go's GOTOOLCHAIN); debian: a newer
    suite's package."""
    source: str
    """Where exactly: the host folder and the digest of its compiled files, or the registry module."""
    home: str = ""
    """Where the image keeps it (its bin/ leads PATH); empty when the tool itself decides (GOTOOLCHAIN)."""
