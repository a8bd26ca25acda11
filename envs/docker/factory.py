"""DockerFactory: the SandboxFactory over one Docker engine (sandboxes, base images, tags, rebuilds)."""
from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from envs.base import LABEL, Limits
from envs.docker.container import DockerSandboxConfig
from envs.docker.engine import KIND_LABEL, owner_labels
from envs.docker.images import build_image, image_labels, remove_image
from envs.docker.sandbox import DockerSandbox
from envs.errors import EnvError


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


PROTECTED_KINDS = ("base", "rootfs")
"""Kinds of image (autoinstall.kind) that finalize never tags over."""


class BaseImages(Protocol):
    """`envs.baseimage.ensure_base_image`, passed in (that module builds on this package)."""

    def __call__(self, *, python: str, log: Callable[[str], None] | None = None,
                 packages: tuple[str, ...] = (), toolchains: tuple[str, ...] = ()) -> str: ...


class DockerFactory:
    """Sandboxes with `limits`; `cache_dir` is mounted at /cache when a sandbox asks for the cache."""

    kind = "docker"

    def __init__(self, limits: Limits | None = None, cache_dir: Path | None = None,
                 base_images: BaseImages | None = None) -> None:
        self.limits = limits or Limits()
        self.cache_dir = cache_dir
        self.base_images = base_images

    def base_image(self, python: str, log: Callable[[str], None] | None = None, *,
                   packages: tuple[str, ...] = (), toolchains: tuple[str, ...] = ()) -> str:
        """The base image for `python` with the Debian `packages` and host `toolchains` added, from `base_images`."""
        if self.base_images is None:
            msg = "this DockerFactory was made without base images (pass base_images=ensure_base_image)"
            raise EnvError(msg)
        if toolchains:  # only then: a callable from before toolchain layers keeps working
            return self.base_images(python=python, log=log, packages=tuple(packages), toolchains=tuple(toolchains))
        return self.base_images(python=python, log=log, packages=tuple(packages))

    def sandbox(self, image: str, *, network: bool, env: Mapping[str, str] | None = None,
                cache: bool = False, trusted: bool = False) -> DockerSandbox:
        return DockerSandbox(DockerSandboxConfig(image=image, limits=self.limits, env=dict(env or {}),
                                                 cache_dir=self.cache_dir if cache else None, network=network,
                                                 cache_mode="shared" if trusted else "layered"))

    def finalize(self, snapshot: str, tag: str, env: Mapping[str, str], labels: Mapping[str, str]) -> str:
        held = (image_labels(tag) or {}).get(KIND_LABEL)
        if held in PROTECTED_KINDS:  # every build starts from it: an environment never takes its tag
            msg = (f"{tag} is autoinstall's {held} image, which every build starts from; an environment is never "
                   "written over it. Give the environment its own image tag (its spec's `image`), or rebuild "
                   "the environment: autoinstall run <repo>")
            raise EnvError(msg)
        lines = [f"FROM {snapshot}"] + [f"ENV {k}={_quote(v)}" for k, v in sorted(env.items())]
        with tempfile.TemporaryDirectory(prefix="autoinstall-final-") as context:
            (Path(context) / "Dockerfile").write_text("\n".join(lines) + "\n")
            return build_image(Path(context), tag, labels={LABEL: "1", **labels}, buildargs={})

    def build(self, context: Path, tag: str, labels: Mapping[str, str]) -> str:
        """A replay of a project's steps: its setup code runs under the sandboxes' memory limit. The image names
        this process as its owner: `cleanup` removes a replay an interrupted build left once the process is gone."""
        return build_image(context, tag, labels={LABEL: "1", **owner_labels(), **labels}, buildargs={},
                           limits=self.limits)

    def discard(self, images: Sequence[str]) -> None:
        for image in images:
            try:
                remove_image(image)
            except EnvError:
                continue
