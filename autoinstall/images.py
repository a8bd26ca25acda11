"""The Docker side of building an environment: base images, sandboxes, final tags and rebuilds."""
from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from autoinstall.paths import cache_dir
from envs.base import LABEL, Limits
from envs.baseimage import ensure_base_image
from envs.docker import DockerSandbox, DockerSandboxConfig, build_image, remove_image
from envs.errors import EnvError


def base_image_for(python: str) -> str:
    """The base image tag for an interpreter version (built on first use, then reused)."""
    return ensure_base_image(python=python)


def sandbox_factory(limits: Limits, env: dict[str, str]) -> Callable[[str], DockerSandbox]:
    """Sandboxes for the install phase: network on, host caches mounted."""

    def make(python: str) -> DockerSandbox:
        return DockerSandbox(DockerSandboxConfig(image=base_image_for(python), limits=limits, env=dict(env),
                                                 cache_dir=cache_dir(), network=True))

    return make


def sandbox_from_image(image: str, limits: Limits, *, network: bool) -> DockerSandbox:
    """A fresh sandbox from an environment image (verification runs with network=False)."""
    return DockerSandbox(DockerSandboxConfig(image=image, limits=limits, network=network))


def env_tag(name: str, revision: str, model: str = "embedded") -> str:
    """`autoinstall-env/NAME:REVISION` (plus `-MODEL` for other models), lower-case as Docker requires.

    The model is part of the tag so that builds of one commit by two models never share an image.
    """
    repo = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._") or "repo"
    suffix = "" if model == "embedded" else "-" + re.sub(r"[^a-z0-9._-]+", "-", model.lower()).strip("-._")
    return f"autoinstall-env/{repo}:{(revision + suffix)[:128]}"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def finalize(snapshot: str, tag: str, env: dict[str, str], *, source: str) -> str:
    """Give the last snapshot its environment variables and a stable tag; returns the tag."""
    lines = [f"FROM {snapshot}"] + [f"ENV {k}={_quote(v)}" for k, v in sorted(env.items())]
    with tempfile.TemporaryDirectory(prefix="autoinstall-final-") as context:
        (Path(context) / "Dockerfile").write_text("\n".join(lines) + "\n")
        return build_image(Path(context), tag, labels={LABEL: "1", "autoinstall.kind": "environment",
                                                        "autoinstall.source": source}, buildargs={})


def build_context(context: Path, tag: str) -> str:
    """Build a replay context written by autoinstall.dockerfile.write_build_context."""
    return build_image(context, tag, labels={LABEL: "1", "autoinstall.kind": "rebuild"}, buildargs={})


def discard(images: list[str]) -> None:
    """Untag or remove intermediate images (snapshots); images still needed as parents stay as layers."""
    for image in images:
        try:
            remove_image(image)
        except EnvError:
            continue
