"""Sandboxes: where commands run. Pick one by short name with `get_sandbox`."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from envs.base import Sandbox

SANDBOXES = {
    "docker": "envs.docker:DockerSandbox",
    "local": "envs.local:LocalSandbox",
    "fake": "envs.fake:FakeSandbox",
}
"""Short name -> "module:class"; modules are imported only when chosen (docker pulls in its SDK)."""


def get_sandbox(kind: str, **config: Any) -> Sandbox:
    """A new, not yet started sandbox of `kind` ("docker", "local" or "fake") built from `config`."""
    if kind not in SANDBOXES:
        msg = f"Unknown sandbox type: {kind!r} (available: {', '.join(SANDBOXES)})"
        raise ValueError(msg)
    module, _, name = SANDBOXES[kind].partition(":")
    sandbox: Sandbox = getattr(import_module(module), name)(**config)
    return sandbox


RUNTIME = {"Environment", "RuntimeSpec", "Observation", "Reward", "EnvironmentStateError"}


def __getattr__(name: str) -> Any:
    """`from envs import Environment` for trainers, imported on first use (it pulls in docker and tools)."""
    if name in RUNTIME:
        return getattr(import_module("envs.runtime"), name)
    msg = f"module 'envs' has no attribute {name!r}"
    raise AttributeError(msg)
