"""The validation containers of one run: one is reused by the next validation only when the last left it exactly
as it found it, so every validation starts from the image's own state.

"Exactly", over the container's whole filesystem (the workspace, build artefacts, caches, /tmp): git's status of the
workspace (every file, ignored ones too) is what it was; the candidate's files are byte for byte what they were
(the caller compares them and calls `restored()`); no file other than them and git's index changed since the lease
began (`find -cnewer`, by the change time no test can set back); and the set of paths is the same (a hash of the
sorted listing: nothing created or removed, while a temporary file made and removed within the run leaves no
trace). The harness's own scratch files (/var/tmp/autoinstall*) and the files Docker mounts (/etc/hosts ...) are
not the container's. Any other container is stopped (in the background: close() waits for every stop).

A runner's neutral caches (RunnerAbilities.neutral_caches: folders whose content cannot change what a later run
computes, by the tool's own design) are left out of the changed files and of the listing, and of nothing else
(git's status still sees the whole workspace, the candidate's files are still compared). Go's build cache is
one: the go command finds an entry only by a hash of the content of every input it compiled from, so an entry
left by another validation's tree is never found for this one's (`go help cache`), and the runner's runs keep
no test result there (-count=1 through GOFLAGS: envs/testrun/go_runner.py). What it does not hash (a C header
cgo includes) can go stale: a validation that changed a file its caches are not keyed by (RunnerAbilities.
content_keyed) gives no container back. Not neutral, by their tools' design (docs/measurements.md: what each
leaves): cargo's target/ (a unit is fresh when its sources' mtimes are older than its fingerprint's), Maven's
target/ (maven-status's stale-source lists, the Surefire reports the runner reads), vitest's results cache
(it orders the next run); npm writes a debug log under ~/.npm/_logs on every `npm test`.
The adversary: a candidate is the project's own history or a rewrite of one of its functions, run by the
project's own tests, never by an agent (no rollout or grading runs in these containers); the go command writes
an entry only under the hash of what it computed it from, and a test that runs the go command gets entries of
the same kind. But the go command trusts what it reads (an output's size is checked, not its hash), so a test
process that wrote into the cache itself, past the go command, could plant an entry that a later validation in
the same container compiles against: a wrong task, never a reward, and only for tests written to do that.

A run whose first GIVE_UP_AFTER restored containers all came back changed elsewhere (a runner that writes its
build cache on every compile, as Go's does where it is not neutral) and none came back clean stops looking: its
later containers are stopped unchecked, never reused, so no validation pays for two walks of a filesystem it
cannot reuse.
"""
from __future__ import annotations

import contextlib
import posixpath
import re
import shlex
import threading
import uuid
from collections.abc import Callable, Iterator

from autoinstall.tasks.workspace import RUN_TMP, Suite
from envs.base import Sandbox, SandboxFactory
from envs.testrun import abilities

SCRATCH = "/var/tmp/autoinstall"
"""What every file the harness writes in a container starts with (patches, reports, plug-ins, lease marks)."""
NOT_ITS_OWN = ("/proc", "/sys", "/dev", "/run", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf", f"{SCRATCH}*")
"""Kernel and Docker mounts, and the harness's scratch: left out of every look at the container's files (which
are its root filesystem and the tmpfs on /tmp)."""
ROOTS = "/ /tmp"
"""Where the container's own files are: its root filesystem and the tmpfs on /tmp (find -xdev stays on each)."""
STATUS = "git status --porcelain=v1 --untracked-files=all --ignored=matching"
_HASH = "LC_ALL=C sort | md5sum"
_PLAIN_PATH = re.compile(r"(/[\w.+-]+)+")
"""A neutral cache's folder as `find -path` matches it literally (no glob character, quote or space)."""
GIVE_UP_AFTER = 3


def _pruned(neutral: tuple[str, ...] = ()) -> str:
    """A find over the container's own files, less the runner's neutral caches."""
    paths = " -o ".join(f"-path '{p}'" for p in (*NOT_ITS_OWN, *neutral))
    return f"find {ROOTS} -xdev \\( {paths} \\) -prune -o"


def _listing(neutral: tuple[str, ...] = ()) -> str:
    """A hash of every path of the container's own files (a find that fails fails the command)."""
    return f"set -o pipefail && {_pruned(neutral)} -print | {_HASH}"


class Containers:
    """Validation containers, each leased by one validation at a time (thread-safe)."""

    def __init__(self, factory: SandboxFactory, image: str, suite: Suite | None = None) -> None:
        self.factory, self.image, self.suite = factory, image, suite
        self._neutral: tuple[str, ...] | None = None
        """The runner's neutral caches in these containers, once the first one was asked."""
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
        """Leases made after the run stopped looking (GIVE_UP_AFTER), or changing a file the runner's neutral caches
        are not keyed by."""

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
        if found is None:
            sandbox = self.factory.sandbox(self.image, network=False).__enter__()
            if checking and self._neutral is None:
                self._neutral = neutral_caches(sandbox, self.suite)
            found = (sandbox, "", "")
        checking = checking and self._keyed(files)
        with self._lock:
            self.unchecked += not checking
        sandbox, state, known = found
        state = state or (_state(sandbox) if checking else "")
        neutral = self._neutral or ()
        mark, listing = _mark(sandbox, known, neutral) if checking else ("", "")
        clean: list[bool] = []
        try:
            yield sandbox, lambda: clean.append(True)
        finally:
            if clean and state and mark and unchanged(sandbox, mark, listing, files, state, neutral):
                with self._lock:
                    self._free.append((sandbox, state, listing))
            else:
                with self._lock:
                    self.changed += bool(clean and state and mark)
                self._stop(sandbox)

    def _keyed(self, files: list[str]) -> bool:
        """Whether the runner's neutral caches (if any) are keyed by the content of every one of `files`."""
        if not self._neutral or self.suite is None:
            return True
        return all(map(abilities(self.suite.runner).content_keyed, files))

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


def neutral_caches(sandbox: Sandbox, suite: Suite | None) -> tuple[str, ...]:
    """The folders the runner's `neutral_caches` command names in this container, run as the suite's runs are
    (its variables, in its project's folder); each a plain absolute path outside the workspace and the harness's
    scratch (any other left checked); () when the runner has none or the command fails."""
    ask = abilities(suite.runner).neutral_caches if suite is not None else None
    command = ask(suite.command) if ask is not None and suite is not None else ""
    if not command or suite is None:
        return ()
    folder = posixpath.normpath(posixpath.join(suite.workdir, suite.project))
    result = sandbox.exec(f"cd {shlex.quote(folder)} && {command}", timeout=120, env=dict(suite.env))
    if not result.ok:
        return ()
    workspace = suite.workdir.rstrip("/") + "/"
    return tuple(sorted({
        path for path in (line.strip() for line in result.stdout.splitlines())
        if _PLAIN_PATH.fullmatch(path) and posixpath.normpath(path) == path and not path.startswith(SCRATCH)
        and not workspace.startswith(path + "/") and not path.startswith(workspace)}))


def _mark(sandbox: Sandbox, listing: str = "", neutral: tuple[str, ...] = ()) -> tuple[str, str]:
    """(a file whose time is the lease's start, the hash of the container's paths: `listing` when known, the one
    `unchanged` found when the container was given back, as nothing ran in it since); ("", "") when they cannot
    be had (the container is then never reused)."""
    path = f"{SCRATCH}-lease-{uuid.uuid4().hex[:8]}"
    empty = f"mkdir -p {RUN_TMP} && find {RUN_TMP} -mindepth 1 -delete"  # the last validation's temporary files
    result = sandbox.exec(f"{empty} && touch {shlex.quote(path)}" + ("" if listing else f" && {_listing(neutral)}"),
                          timeout=300)
    listing = listing or result.stdout
    return (path, listing) if result.ok and listing.strip() else ("", "")


def unchanged(sandbox: Sandbox, mark: str, listing: str, files: list[str], state: str,
              neutral: tuple[str, ...] = ()) -> bool:
    """No file but `files` and git's index changed since `mark`, the same paths as `listing`, git's status
    `state` again (the `neutral` caches left out): one walk of the filesystem lists the paths and writes those
    changed since `mark` aside."""
    quoted = shlex.quote(mark)
    newer, hashed = shlex.quote(f"{mark}-newer"), shlex.quote(f"{mark}-paths")
    separator = f"autoinstall-lease-{uuid.uuid4().hex[:8]}"
    walk = f"{_pruned(neutral)} \\( -print , \\( ! -type d -cnewer {quoted} -fprint {newer} \\) \\)"
    result = sandbox.exec(f"set -o pipefail && {walk} | {_HASH} > {hashed} && cat {newer} && echo {separator} "
                          f"&& cat {hashed} && echo {separator} && rm -f {quoted} {newer} {hashed} && {STATUS}",
                          timeout=300)
    parts = result.stdout.split(f"{separator}\n")
    if not result.ok or len(parts) != 3 or parts[1] != listing or f"state\n{parts[2]}" != state:
        return False
    root = sandbox.workdir.rstrip("/")
    allowed = {f"{root}/{f}" for f in files} | {f"{root}/.git/index"}
    return all(path in allowed for path in parts[0].splitlines())
