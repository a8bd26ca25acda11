"""Validation containers on Docker: one goes back to the pool only when a validation left it exactly as it found
it. A file written, a file removed, a bytecode or build artefact (even in a folder git already ignores) or a
write outside the workspace each stop it, so the next validation starts from the image's own state: whether the
check reads the container's writable layer on the host or walks its filesystem."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from autoinstall.options import docker_factory
from autoinstall.tasks.containers import Containers
from autoinstall.tasks.workspace import apply_patch
from envs.base import Changes, Sandbox, SandboxFactory

SOURCE = "def double(x):\n    return 2 * x\n"
PATCH = ("--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def double(x):\n-    return 2 * x\n"
         "+    return 3 * x\n")


@pytest.fixture(scope="module")
def image(base_image: str) -> Iterator[str]:
    """A workspace under git: a module, an ignored build folder holding an artefact, an ignored __pycache__."""
    factory = docker_factory()
    with factory.sandbox(base_image, network=False) as box:
        box.write_file("pkg/calc.py", SOURCE.encode())
        box.write_file(".gitignore", b"__pycache__/\nbuild/\n")
        box.write_file("build/old.o", b"artefact")
        box.write_file("pkg/__pycache__/old.pyc", b"bytecode")
        box.write_file("/var/keep", b"kept")
        assert box.exec("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm x",
                        timeout=60).ok
        snapshot = box.snapshot("tasks-containers")
    yield snapshot
    factory.discard([snapshot])


def validation(containers: Containers, change: str | None) -> None:
    """A validation's shape: the bug applied, a command run (it makes and removes a temporary file, as pytest's
    capture does: no trace), plus `change`, the bug reverted, restored."""
    run = "import sys, tempfile; sys.path.insert(0, 'pkg'); import calc; tempfile.TemporaryFile().close()"
    with containers.lease(["pkg/calc.py"]) as (box, restored):
        assert apply_patch(box, PATCH)
        assert box.exec(f"python -c \"{run}\" && {change or 'true'}", timeout=60,
                        env={"PYTHONDONTWRITEBYTECODE": "1"}).ok
        assert apply_patch(box, PATCH, reverse=True)
        restored()


class Walked:
    """A Docker sandbox that does not list its own changes (envs/base.py `Changes`): the check walks it."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox

    def __getattr__(self, name: str) -> object:
        if name == "changes":
            raise AttributeError(name)
        return getattr(self._sandbox, name)

    def __enter__(self) -> Walked:
        self._sandbox.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sandbox.__exit__(*exc)


class WalkedFactory:
    def __init__(self, factory: SandboxFactory) -> None:
        self.factory = factory

    def sandbox(self, image: str, *, network: bool) -> Walked:
        return Walked(self.factory.sandbox(image, network=network))


@pytest.mark.parametrize("look", ["listed", "walked"])
@pytest.mark.parametrize("change", [
    "echo new > pkg/extra.py",                     # a file the candidate wrote
    "rm build/old.o",                              # a file it removed (ignored: git status cannot see it)
    "echo x > pkg/__pycache__/calc.cpython.pyc",   # bytecode in a folder git ignores whole
    "echo x > build/new.o",                        # a build artefact
    "echo y > build/old.o",                        # an ignored artefact rewritten (the same paths)
    "mkdir -p /root/.cache/go-build && echo x > /root/.cache/go-build/entry",  # a cache outside the workspace
    "echo x > /tmp/scratch",
    "rm /var/keep",                                # a file removed outside the workspace
    "touch pkg/calc.py.orig",                      # beside the candidate's own file
])
def test_a_container_a_validation_changed_is_never_reused(image: str, change: str, look: str) -> None:
    """The same verdicts whether the container's writable layer is read on the host (listed) or walked."""
    factory = docker_factory() if look == "listed" else WalkedFactory(docker_factory())
    containers = Containers(factory, image)  # type: ignore[arg-type]
    try:
        validation(containers, None)
        validation(containers, None)
        assert (containers.started, containers.reused) == (1, 1)  # left exactly as found: reused
        validation(containers, change)
        validation(containers, None)
        assert (containers.started, containers.reused) == (2, 2), change  # the changed one was stopped
        with containers.lease(["pkg/calc.py"]) as (box, _):  # the image's own state
            layer = box.changes() if isinstance(box, Changes) else None  # the engine runs on this host
            assert (layer is not None) == (look == "listed"), layer
            assert box.read_file("pkg/calc.py") == SOURCE.encode()
            listed = box.exec("ls -A pkg build pkg/__pycache__ /var /tmp /root/.cache", timeout=60).stdout
            assert "old.o" in listed and "old.pyc" in listed and "keep" in listed
            assert not {"extra.py", "new.o", "calc.cpython.pyc", "go-build", "scratch", "calc.py.orig"} & set(listed.split())
    finally:
        containers.close()
