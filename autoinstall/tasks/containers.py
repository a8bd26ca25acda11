"""The validation containers of one run: one is reused by the next validation only when the last left it exactly
as it found it, so every validation starts from the image's own state.

"Exactly", over the container's whole filesystem (the workspace, build artefacts, caches, /tmp): git's status of the
workspace (every file, ignored ones too) is what it was; the candidate's files are byte for byte what they were
(the caller compares them and calls `restored()`); no file other than them and git's index changed since the lease
began (`find -cnewer`, by the change time no test can set back); and the set of paths is the same (a hash of the
sorted listing: nothing created or removed, while a temporary file made and removed within the run leaves no
trace). The harness's own scratch files (/var/tmp/autoinstall*) and the files Docker mounts (/etc/hosts ...) are
not the container's. Any other container is stopped (in the background: close() waits for every stop).

A run whose first GIVE_UP_AFTER restored containers all came back changed elsewhere (a runner that writes its
build cache on every compile, as Go's does) and none came back clean stops looking: its later containers are
stopped unchecked, never reused, so no validation pays for two walks of a filesystem it cannot reuse.
"""
from __future__ import annotations

import contextlib
import shlex
import threading
import uuid
from collections.abc import Callable, Iterator

from autoinstall.tasks.workspace import RUN_TMP
from envs.base import Sandbox, SandboxFactory

SCRATCH = "/var/tmp/autoinstall"
"""What every file the harness writes in a container starts with (patches, reports, plug-ins, lease marks)."""
NOT_ITS_OWN = ("/proc", "/sys", "/dev", "/run", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf", f"{SCRATCH}*")
"""Kernel and Docker mounts, and the harness's scratch: left out of every look at the container's files (which
are its root filesystem and the tmpfs on /tmp)."""
STATUS = "git status --porcelain=v1 --untracked-files=all --ignored=matching"
_PRUNED = "find / /tmp -xdev \\( " + " -o ".join(f"-path '{p}'" for p in NOT_ITS_OWN) + " \\) -prune -o"
_HASH = "LC_ALL=C sort | md5sum"
_LISTING = f"set -o pipefail && {_PRUNED} -print | {_HASH}"
"""A hash of every path of the container's own files (a find that fails fails the command)."""
GIVE_UP_AFTER = 3


class Containers:
    """Validation containers, each leased by one validation at a time (thread-safe)."""

    def __init__(self, factory: SandboxFactory, image: str) -> None:
        self.factory, self.image = factory, image
        self._free: list[tuple[Sandbox, str, str]] = []
        """(container, its git status, the hash of its paths): the hash `unchanged` found again when it was
        given back, so the next lease need not walk the filesystem for it."""
        self._lock = threading.Lock()
        self._stopping: list[threading.Thread] = []
        self._errors: list[Exception] = []
        self.started = 0
        self.reused = 0
        self.changed = 0
        """Containers given back restored but changed elsewhere."""
        self.unchecked = 0
        """Leases made after the run stopped looking (GIVE_UP_AFTER)."""

    @property
    def checking(self) -> bool:
        """Whether a container given back is looked at for reuse."""
        return self.reused > 0 or self.changed < GIVE_UP_AFTER

    @contextlib.contextmanager
    def lease(self, files: list[str]) -> Iterator[tuple[Sandbox, Callable[[], None]]]:
        """A container, and `restored()` to call when the validation gave `files` back byte for byte."""
        with self._lock:
            found = self._free.pop() if self._free else None
            self.reused += found is not None
            self.started += found is None
            checking = self.checking
            self.unchecked += not checking
        if found is None:
            sandbox = self.factory.sandbox(self.image, network=False).__enter__()
            found = (sandbox, _state(sandbox) if checking else "", "")
        sandbox, state, known = found
        mark, listing = _mark(sandbox, known) if checking else ("", "")
        clean: list[bool] = []
        try:
            yield sandbox, lambda: clean.append(True)
        finally:
            if clean and state and mark and unchanged(sandbox, mark, listing, files, state):
                with self._lock:
                    self._free.append((sandbox, state, listing))
            else:
                with self._lock:
                    self.changed += bool(clean and state and mark)
                self._stop(sandbox)

    def _stop(self, sandbox: Sandbox) -> None:
        """Stop and remove the container in the background (the validation need not wait for the engine)."""
        def stop() -> None:
            try:
                sandbox.__exit__(None, None, None)
            except Exception as e:  # noqa: BLE001 - raised again by close()
                with self._lock:
                    self._errors.append(e)

        thread = threading.Thread(target=stop, name="validation-stop", daemon=True)
        thread.start()
        with self._lock:
            self._stopping.append(thread)

    def close(self) -> None:
        with self._lock:
            free, self._free = self._free, []
            stopping, self._stopping = self._stopping, []
        for sandbox, _, _ in free:
            sandbox.__exit__(None, None, None)
        for thread in stopping:
            thread.join()
        if self._errors:
            raise self._errors[0]


def _state(sandbox: Sandbox) -> str:
    """The workspace's state as git sees it, every file included; "" when it cannot tell (never reused)."""
    result = sandbox.exec(STATUS, timeout=120)
    return f"state\n{result.stdout}" if result.ok else ""


def _mark(sandbox: Sandbox, listing: str = "") -> tuple[str, str]:
    """(a file whose time is the lease's start, the hash of the container's paths: `listing` when known, the one
    `unchanged` found when the container was given back, as nothing ran in it since); ("", "") when they cannot
    be had (the container is then never reused)."""
    path = f"{SCRATCH}-lease-{uuid.uuid4().hex[:8]}"
    empty = f"mkdir -p {RUN_TMP} && find {RUN_TMP} -mindepth 1 -delete"  # the last validation's temporary files
    result = sandbox.exec(f"{empty} && touch {shlex.quote(path)}" + ("" if listing else f" && {_LISTING}"),
                          timeout=300)
    listing = listing or result.stdout
    return (path, listing) if result.ok and listing.strip() else ("", "")


def unchanged(sandbox: Sandbox, mark: str, listing: str, files: list[str], state: str) -> bool:
    """No file but `files` and git's index changed since `mark`, the same paths as `listing`, git's status
    `state` again: one walk of the filesystem lists the paths and writes those changed since `mark` aside."""
    quoted = shlex.quote(mark)
    newer, hashed = shlex.quote(f"{mark}-newer"), shlex.quote(f"{mark}-paths")
    separator = f"autoinstall-lease-{uuid.uuid4().hex[:8]}"
    walk = f"{_PRUNED} \\( -print , \\( ! -type d -cnewer {quoted} -fprint {newer} \\) \\)"
    result = sandbox.exec(f"set -o pipefail && {walk} | {_HASH} > {hashed} && cat {newer} && echo {separator} "
                          f"&& cat {hashed} && echo {separator} && rm -f {quoted} {newer} {hashed} && {STATUS}",
                          timeout=300)
    parts = result.stdout.split(f"{separator}\n")
    if not result.ok or len(parts) != 3 or parts[1] != listing or f"state\n{parts[2]}" != state:
        return False
    root = sandbox.workdir.rstrip("/")
    allowed = {f"{root}/{f}" for f in files} | {f"{root}/.git/index"}
    return all(path in allowed for path in parts[0].splitlines())
