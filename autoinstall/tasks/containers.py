"""The validation containers of one run: one is reused by the next validation only when the last left it exactly
as it found it, so every validation starts from the image's own state.

"Exactly": git's status of the workspace (every file, ignored ones too) is what it was, the candidate's files are
byte for byte what they were (the caller compares them and calls `restored()`), and nothing else was written
anywhere in the container's own filesystem since the lease began: no file created, changed or removed (a
removal changes its directory), build artefacts and caches included (`find -cnewer`, by the change time no
test can set back). Only the candidate's files, the directories holding them, git's index and the harness's own
scratch files (/var/tmp/autoinstall*, removed by each run) may change. Any other container is stopped.
"""
from __future__ import annotations

import contextlib
import shlex
import threading
import uuid
from collections.abc import Callable, Iterator

from envs.base import Sandbox, SandboxFactory

SCRATCH = "/var/tmp/autoinstall"
"""What every file the harness writes in a container starts with (patches, reports, plug-ins, lease marks)."""
NOT_FILES = ("/proc", "/sys", "/dev", "/run")
STATUS = "git status --porcelain=v1 --untracked-files=all --ignored=matching"
_FIND_FAILED = "!find failed"


class Containers:
    """Validation containers, each leased by one validation at a time (thread-safe)."""

    def __init__(self, factory: SandboxFactory, image: str) -> None:
        self.factory, self.image = factory, image
        self._free: list[tuple[Sandbox, str]] = []
        self._lock = threading.Lock()
        self.started = 0
        self.reused = 0

    @contextlib.contextmanager
    def lease(self, files: list[str]) -> Iterator[tuple[Sandbox, Callable[[], None]]]:
        """A container, and `restored()` to call when the validation gave `files` back byte for byte."""
        with self._lock:
            found = self._free.pop() if self._free else None
            self.reused += found is not None
            self.started += found is None
        if found is None:
            sandbox = self.factory.sandbox(self.image, network=False).__enter__()
            found = (sandbox, _state(sandbox))
        sandbox, state = found
        mark = _mark(sandbox)
        clean: list[bool] = []
        try:
            yield sandbox, lambda: clean.append(True)
        finally:
            if clean and state and mark and unchanged(sandbox, mark, files, state):
                with self._lock:
                    self._free.append((sandbox, state))
            else:
                sandbox.__exit__(None, None, None)

    def close(self) -> None:
        with self._lock:
            free, self._free = self._free, []
        for sandbox, _ in free:
            sandbox.__exit__(None, None, None)


def _state(sandbox: Sandbox) -> str:
    """The workspace's state as git sees it, every file included; "" when it cannot tell (never reused)."""
    result = sandbox.exec(STATUS, timeout=120)
    return f"state\n{result.stdout}" if result.ok else ""


def _mark(sandbox: Sandbox) -> str:
    """A file whose time is the lease's start; "" when it cannot be made (the container is then never reused)."""
    path = f"{SCRATCH}-lease-{uuid.uuid4().hex[:8]}"
    return path if sandbox.exec(["touch", path], timeout=60).ok else ""


def unchanged(sandbox: Sandbox, mark: str, files: list[str], state: str) -> bool:
    """Nothing but `files`, the directories above them and git's index written since `mark`, and git's status
    `state` again."""
    pruned = " -o ".join(f"-path {shlex.quote(p)}" for p in (*NOT_FILES, f"{SCRATCH}*"))
    quoted = shlex.quote(mark)
    separator = f"autoinstall-status-{uuid.uuid4().hex[:8]}"
    result = sandbox.exec(f"find / -xdev \\( {pruned} \\) -prune -o -cnewer {quoted} -print "
                          f"|| echo {shlex.quote(_FIND_FAILED)}; rm -f {quoted}; echo {separator}; {STATUS}",
                          timeout=300)
    written, found, status = result.stdout.partition(f"{separator}\n")
    if not (result.ok and found) or f"state\n{status}" != state:
        return False
    allowed = _allowed(sandbox.workdir.rstrip("/") or "/", files)
    return all(path in allowed for path in written.splitlines())


def _allowed(workdir: str, files: list[str]) -> set[str]:
    """The candidate's files, every directory above them (a file rewritten by rename changes its directory),
    git's index and its folder, /var/tmp (the scratch files come and go there)."""
    paths = {f"{workdir}/{f}" for f in files} | {f"{workdir}/.git", f"{workdir}/.git/index", "/var/tmp"}
    for path in list(paths):
        while path not in ("", "/"):
            path = path.rsplit("/", 1)[0] or "/"
            paths.add(path)
    return paths
