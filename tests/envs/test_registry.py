"""push_image / pull_image against a real registry on loopback (Debian's `docker-registry`), including one
that refuses pushes (read-only) and one that is not there. The Ray tests use `running_registry` too."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tarfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from envs.docker import image_labels, import_rootfs, pull_image, push_image, registry_ref, remove_image
from envs.errors import ImageNotFoundError, RegistryError

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Loopback HTTP without the machine's proxy."""


def need_registry_binary() -> str:
    """The docker-registry binary, or skip (fail when CI is set: CI must run these tests)."""
    path = shutil.which("docker-registry")
    if path is None:
        msg = "docker-registry is not installed (`apt-get install -y docker-registry`)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {msg}", pytrace=False)
        pytest.skip(msg)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def registry_get(registry: str, path: str) -> dict[str, object]:
    with _DIRECT.open(f"http://{registry}{path}", timeout=10) as response:
        return json.loads(response.read() or b"{}")


@contextmanager
def running_registry(root: Path, *, readonly: bool = False) -> Iterator[str]:
    """A registry serving plain HTTP on 127.0.0.1:<free port>, storing under `root`; yields HOST:PORT."""
    binary = need_registry_binary()
    root.mkdir(parents=True, exist_ok=True)
    storage: dict[str, object] = {"filesystem": {"rootdirectory": str(root / "data")}}
    if readonly:
        storage["maintenance"] = {"readonly": {"enabled": True}}
    address = f"127.0.0.1:{free_port()}"
    config = {"version": 0.1, "log": {"level": "warn"}, "storage": storage, "http": {"addr": address}}
    (root / "config.yml").write_text(yaml.safe_dump(config))
    with (root / "registry.log").open("w") as log:
        proc = subprocess.Popen([binary, "serve", str(root / "config.yml")], stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                registry_get(address, "/v2/")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"docker-registry did not start: {(root / 'registry.log').read_text()}")
                time.sleep(0.1)
        yield address
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(root / "data", ignore_errors=True)  # pushed images: a gigabyte or more


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_registry(tmp_path_factory.mktemp("registry")) as address:
        yield address


@pytest.fixture(scope="module")
def tiny_image(docker_engine: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A one-file image (a few bytes), so pushes take milliseconds."""
    root = tmp_path_factory.mktemp("tiny")
    (root / "hello.txt").write_text("hello\n")
    with tarfile.open(root / "rootfs.tar", "w") as tar:
        tar.add(root / "hello.txt", arcname="hello.txt")
    tag = import_rootfs(root / "rootfs.tar", f"autoinstall-test/tiny:{uuid.uuid4().hex[:8]}", {})
    yield tag
    remove_image(tag)


@pytest.mark.parametrize(("image", "registry", "ref"), [
    ("autoinstall-env/spam:abc123", "127.0.0.1:5000", "127.0.0.1:5000/autoinstall-env/spam:abc123"),
    ("spam", "localhost:5000", "localhost:5000/spam:latest"),
    ("old.example.com:443/team/spam:v1", "reg.example.com/mirror", "reg.example.com/mirror/team/spam:v1"),
    ("autoinstall-env/spam:1", "http://127.0.0.1:5000/", "127.0.0.1:5000/autoinstall-env/spam:1"),
])
def test_registry_ref(image: str, registry: str, ref: str) -> None:
    assert registry_ref(image, registry) == ref


@pytest.mark.parametrize(("image", "registry", "message"), [
    ("a:b", "myregistry", "Docker Hub namespace"),
    ("a:b", "host:port", "HOST:PORT"),
    ("a:b", "", "HOST:PORT"),
    ("sha256:0123abcd", "127.0.0.1:5000", "NAME:TAG"),
])
def test_what_cannot_be_pushed_is_refused_before_any_push(image: str, registry: str, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        registry_ref(image, registry)


def test_push_then_pull(tiny_image: str, registry: str) -> None:
    name, tag = tiny_image.rsplit(":", 1)
    ref = push_image(tiny_image, registry)
    assert ref == f"{registry}/{tiny_image}"
    assert name in registry_get(registry, "/v2/_catalog")["repositories"]  # type: ignore[operator]
    assert registry_get(registry, f"/v2/{name}/tags/list")["tags"] == [tag]
    assert remove_image(ref)
    assert image_labels(ref) is None
    pulled = pull_image(ref)
    assert pulled.startswith("sha256:") and image_labels(ref) is not None
    remove_image(ref)


def test_a_read_only_registry_refuses_the_push(tiny_image: str, tmp_path: Path) -> None:
    with running_registry(tmp_path / "ro", readonly=True) as readonly:
        with pytest.raises(RegistryError) as caught:
            push_image(tiny_image, readonly)
    message = str(caught.value)
    assert f"Pushing {tiny_image} to {readonly}" in message and "405" in message
    assert "not read-only" in message and f"curl http://{readonly}/v2/" in message
    assert image_labels(f"{readonly}/{tiny_image}") is None, "the failed push's tag is left behind"
    assert image_labels(tiny_image) is not None


def test_an_unreachable_registry(tiny_image: str) -> None:
    nobody = f"127.0.0.1:{free_port()}"
    with pytest.raises(RegistryError, match="connection refused") as caught:
        push_image(tiny_image, nobody)
    assert f"a registry runs at {nobody}" in str(caught.value)


def test_pushing_an_image_that_does_not_exist(docker_engine: None, registry: str) -> None:
    with pytest.raises(ImageNotFoundError, match="No local image autoinstall-test/absent:1"):
        push_image("autoinstall-test/absent:1", registry)


def test_pulling_what_was_never_pushed(docker_engine: None, registry: str) -> None:
    with pytest.raises(RegistryError, match="manifest unknown") as caught:
        pull_image(f"{registry}/autoinstall-test/never:1")
    assert f"curl http://{registry}/v2/autoinstall-test/never/tags/list" in str(caught.value)


def test_a_sandbox_pulls_a_registry_image_that_is_not_here(base_image: str, registry: str) -> None:
    from envs.docker import DockerSandbox, list_images, push_image

    rootfs = next(t for img in list_images({"autoinstall.kind": "rootfs"}) for t in img["tags"] if "<none>" not in t)
    ref = push_image(rootfs, registry)  # the bootstrapped Debian: small, and it has a shell
    remove_image(ref)
    with DockerSandbox(image=ref) as sandbox:
        assert sandbox.exec(["cat", "/etc/debian_version"]).ok
    remove_image(ref)
    with pytest.raises(ImageNotFoundError, match="not on this engine"), DockerSandbox(
            image="autoinstall-test/never-built:x", pull="missing"):
        pass
