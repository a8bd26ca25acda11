"""Pushing environment images to a registry and pulling them back."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import docker
import docker.errors

from envs.docker.engine import _ENGINE_ERRORS, connect
from envs.errors import ImageNotFoundError, RegistryError

_REGISTRY = re.compile(r"^(localhost|\[[0-9a-fA-F:]+\]|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)(:\d{1,5})?"
                       r"(/[a-z0-9]+([._-][a-z0-9]+)*)*$")


def _has_host(component: str) -> bool:
    """Whether an image name's first component names a registry host (Docker's rule)."""
    return "." in component or ":" in component or component == "localhost"


def registry_ref(image: str, registry: str) -> str:
    """The reference `REGISTRY/NAME:TAG` of a local image `NAME:TAG` in `registry` (HOST[:PORT][/PATH]);
    a registry host already in `image` is replaced.

    Raises:
        RegistryError: `registry` is not HOST[:PORT], or `image` has no name to push under.
    """

    host = registry.strip().removeprefix("http://").removeprefix("https://").rstrip("/")
    if not _REGISTRY.match(host) or not _has_host(host.split("/", 1)[0]):
        msg = (f"{registry!r} is not a registry address: give HOST:PORT (e.g. 127.0.0.1:5000 or "
               "registry.example.com:5000); a bare name would be read by Docker as a Docker Hub namespace.")
        raise RegistryError(msg)
    name, tag = docker.utils.parse_repository_tag(image)
    if image.startswith("sha256:") or "@" in image:
        msg = f"Cannot push {image}: give the image a name and tag (NAME:TAG) first."
        raise RegistryError(msg)
    first, _, rest = name.partition("/")
    if rest and _has_host(first):
        name = rest
    return f"{host}/{name}:{tag or 'latest'}"


def _registry_advice(registry: str) -> str:
    return (f"Check that a registry runs at {registry} and that this machine reaches it (`curl http://{registry}"
            f"/v2/` answers), that it accepts pushes (not read-only; `docker login {registry}` if it needs "
            "credentials), and that the Docker engine may use it (a plain-HTTP registry outside 127.0.0.0/8 "
            "must be in insecure-registries in /etc/docker/daemon.json).")


def _stream_errors(items: Iterator[dict[str, Any]]) -> str | None:
    """The first error in a push/pull progress stream, or None."""
    for item in items:
        if "error" in item or "errorDetail" in item:
            detail = item.get("errorDetail") or {}
            return str(item.get("error") or detail.get("message") or item).strip()
    return None


def push_image(image: str, registry: str, *, timeout: int = 1800, base_url: str | None = None) -> str:
    """Tag the local image `image` (NAME:TAG) as REGISTRY/NAME:TAG and push it; returns that reference.

    Raises:
        RegistryError: the registry refused the push or could not be reached (the message says what to check).
        ImageNotFoundError: there is no local image `image`.
    """

    ref = registry_ref(image, registry)
    repo, tag = ref.rsplit(":", 1)
    client = connect(base_url, timeout=timeout)
    try:
        try:
            client.api.tag(image, repo, tag=tag)
        except docker.errors.ImageNotFound as e:
            msg = f"No local image {image} to push to {registry}; build it first (or check the tag)."
            raise ImageNotFoundError(msg) from e
        try:
            error = _stream_errors(client.api.push(repo, tag=tag, stream=True, decode=True))
        except _ENGINE_ERRORS as e:
            error = f"{type(e).__name__}: {e}"
        if error is not None:
            with suppress(*_ENGINE_ERRORS):
                client.api.remove_image(ref)  # only the tag: the image keeps its own name
            msg = f"Pushing {image} to {registry} as {ref} failed: {error}. {_registry_advice(registry)}"
            raise RegistryError(msg)
    finally:
        client.close()
    return ref


def pull_image(ref: str, *, timeout: int = 1800, base_url: str | None = None) -> str:
    """Pull `ref` (REGISTRY/NAME:TAG) onto this engine; returns the image id.

    Raises:
        RegistryError: the registry could not be reached or has no such image.
    """

    name, tag = docker.utils.parse_repository_tag(ref)
    client = connect(base_url, timeout=timeout)
    try:
        error = _stream_errors(client.api.pull(name, tag=tag or "latest", stream=True, decode=True))
        if error is None:
            return str(client.api.inspect_image(ref)["Id"])
    except _ENGINE_ERRORS as e:
        error = f"{type(e).__name__}: {e}"
    finally:
        client.close()
    registry = name.split("/", 1)[0] if _has_host(name.split("/", 1)[0]) else "docker.io"
    msg = (f"Pulling {ref} failed: {error}. Check that it was pushed (`curl http://{registry}/v2/"
           f"{name.partition('/')[2]}/tags/list`). {_registry_advice(registry)}")
    raise RegistryError(msg)
