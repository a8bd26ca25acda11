"""The validation containers of one run: one is reused by the next validation only when the last left it exactly
as it found it, so every validation starts from the image's own state.

"Exactly", over the container's whole filesystem (the workspace, build artefacts, caches, /tmp): git's status of the
workspace (every file, ignored ones too) is what it was; the candidate's files are byte for byte what they were
(the caller compares them and calls `restored()`); no file other than them and git's index changed since the lease
began (`find -cnewer`, by the change time no test can set back); and the set of paths is the same (a hash of the
sorted listing: nothing created or removed, while a temporary file made and removed within the run leaves no
trace). The harness's own scratch files (/var/tmp/autoinstall*) and the files Docker mounts (/etc/hosts ...) are
not the container's. Any other container is stopped (in the background: close() waits for every stop).

Where the sandbox lists its root filesystem's changes itself (envs/base.py `Changes`: Docker's overlay2 writable
layer, read on the host by envs/docker/upper.py; the engine's own `container diff` took 3-5 s a call here),
nothing walks the root filesystem: its set of paths is the image's with those added and less those deleted, so
the same added and deleted paths are the same set; a file changed in any way since the container started
(content, metadata, a link) is in its writable layer, so only those are asked whether they changed since the
lease began; the tmpfs on /tmp, which the layer does not hold, is still walked. The verdicts are the walk's
(stricter only for a folder whose own times or mode alone changed); the cost is the few paths a run wrote, not
the ~36,000 of a Go image.

A runner's neutral caches (RunnerAbilities.neutral_caches: folders whose content cannot change what a later run
computes, by the tool's own design) are left out of the changed files and of the listing, and of nothing else
(git's status still sees the whole workspace, the candidate's files are still compared). Go's build cache is
one: the go command finds an entry only by a hash of the content of every input it compiled from, so an entry
left by another validation's tree is never found for this one's (`go help cache`), and the runner's runs keep
no test result there (-count=1 through GOFLAGS: envs/testrun/go_runner.py). What it does not hash (a C header
cgo includes) can go stale: a validation that changed a file its caches are not keyed by (RunnerAbilities.
content_keyed) gives no container back. npm's debug logs (~/.npm/_logs, one per `npm test`) and its update
notifier's mark are another: written, never read by a run. The folders holding a neutral cache are made in a new
container before its first look, as its first run would make them. Not neutral, by their tools' design
(docs/measurements.md: what each leaves): cargo's target/ (a unit is fresh when its sources' mtimes are older
than its fingerprint's), Maven's target/ (maven-status's stale-source lists, the Surefire reports the runner
reads), vitest's results cache (node_modules/.vite/vitest/results.json: each file's last duration and failure,
by which the next run orders its files). A cache like vitest's is not ignored but put back
(RunnerAbilities.reset_caches): kept aside when the container starts, restored before each look, so every
validation in a reused container reads the image's copy, as one in a fresh container (and the grader) does
(the copy kept aside is in the harness's scratch, within a test's reach as the Go cache is, below). jest's cache
lives under TMPDIR (RUN_TMP), which every lease empties.
The adversary: a candidate is the project's own history or a rewrite of one of its functions, run by the
project's own tests, never by an agent (no rollout or grading runs in these containers); the go command writes
an entry only under the hash of what it computed it from, and a test that runs the go command gets entries of
the same kind. But the go command trusts what it reads (an output's size is checked, not its hash), so a test
process that wrote into the cache itself, past the go command, could plant an entry that a later validation in
the same container compiles against: a wrong task, never a reward, and only for tests written to do that.

A run whose first GIVE_UP_AFTER restored containers all came back changed elsewhere (a runner that writes its
build cache on every compile, as Go's does where it is not neutral) and none came back clean stops looking: its
later containers are stopped unchecked, never reused, so no validation pays for two looks at a filesystem it
cannot reuse.
"""
from __future__ import annotations

import contextlib
import fnmatch
import posixpath
import re
import shlex
import threading
import uuid
from collections.abc import Callable, Iterator

from autoinstall.tasks.workspace import RUN_TMP, Suite
from envs.base import Changes, Sandbox, SandboxFactory
from envs.testrun import abilities

SCRATCH = "/var/tmp/autoinstall"
"""What every file the harness writes in a container starts with (patches, reports, plug-ins, lease marks)."""
NOT_ITS_OWN = ("/proc", "/sys", "/dev", "/run", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf", f"{SCRATCH}*")
"""Kernel and Docker mounts, and the harness's scratch: left out of every look at the container's files (which
are its root filesystem and the tmpfs on /tmp)."""
ROOTS = "/ /tmp"
"""Where the container's own files are: its root filesystem and the tmpfs on /tmp (find -xdev stays on each)."""
MOUNTED = "/tmp"
"""Where they are when the sandbox lists its root filesystem's changes itself (`Changes`): the tmpfs, walked."""
STATUS = "git status --porcelain=v1 --untracked-files=all --ignored=matching"
_HASH = "LC_ALL=C sort | md5sum"
_PLAIN_PATH = re.compile(r"(/[\w.+-]+)+")
"""A neutral cache's folder as `find -path` matches it literally (no glob character, quote or space)."""
GIVE_UP_AFTER = 3


def _pruned(neutral: tuple[str, ...] = (), roots: str | None = None) -> str:
    """A find over the container's own files (in `roots`, default ROOTS), less the runner's neutral caches."""
    paths = " -o ".join(f"-path '{p}'" for p in (*NOT_ITS_OWN, *neutral))
    return f"find {ROOTS if roots is None else roots} -xdev \\( {paths} \\) -prune -o"


def _listing(neutral: tuple[str, ...] = (), roots: str | None = None) -> str:
    """A hash of every path of the container's own files (a find that fails fails the command)."""
    return f"set -o pipefail && {_pruned(neutral, roots)} -print | {_HASH}"


def _left_out(neutral: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether the walk (`_pruned`) would leave a path out: it, or a folder holding it, is one of NOT_ITS_OWN
    (`find -path`'s match, whose `*` spans slashes), a neutral cache, or on the walked tmpfs (MOUNTED)."""
    plain = tuple(p for p in (*NOT_ITS_OWN, *neutral, MOUNTED) if not any(c in p for c in "*?["))
    globs = tuple(p for p in NOT_ITS_OWN if any(c in p for c in "*?["))

    def left_out(path: str) -> bool:
        if any(path == p or path.startswith(p + "/") for p in plain):
            return True
        parts = path.split("/")
        return any(fnmatch.fnmatchcase("/".join(parts[:i]), g) for g in globs for i in range(2, len(parts) + 1))
    return left_out


def _changes(sandbox: Sandbox, neutral: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """The container's own changes since it started, as the sandbox lists them (less what the walk leaves out);
    None when it cannot list them (then the walk looks)."""
    listed = sandbox.changes() if isinstance(sandbox, Changes) else None
    if listed is None:
        return None
    left_out = _left_out(neutral)
    return [(kind, path) for kind, path in listed if not left_out(path)]


def _paths(changes: list[tuple[str, str]]) -> str:
    """What decides the container's set of paths: those added to its image's and those deleted from it."""
    return "".join(f"{kind} {path}\n" for kind, path in sorted(changes) if kind in "AD")


class Containers:
    """Validation containers, each leased by one validation at a time (thread-safe)."""

    def __init__(self, factory: SandboxFactory, image: str, suite: Suite | None = None) -> None:
        self.factory, self.image, self.suite = factory, image, suite
        self._neutral: tuple[str, ...] | None = None
        """The runner's neutral caches in these containers, once the first one was asked."""
        self._reset: tuple[str, ...] = ()
        """The runner's caches put back as they were before a container is looked at (reset_caches)."""
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
                self._reset = reset_caches(sandbox, self.suite)
            found = (sandbox, "", "")
        checking = checking and self._keyed(files)
        with self._lock:
            self.unchecked += not checking
        sandbox, state, known = found
        state = state or (_state(sandbox) if checking else "")
        neutral, reset = self._neutral or (), self._reset
        mark, listing = _mark(sandbox, known, neutral, reset) if checking else ("", "")
        clean: list[bool] = []
        try:
            yield sandbox, lambda: clean.append(True)
        finally:
            if clean and state and mark and unchanged(sandbox, mark, listing, files, state, neutral, reset):
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
    workspace = suite.workdir.rstrip("/") + "/" if suite is not None else "/"
    return tuple(p for p in _folders(sandbox, suite, ask) if not p.startswith(workspace))


def reset_caches(sandbox: Sandbox, suite: Suite | None) -> tuple[str, ...]:
    """The folders the runner's `reset_caches` command names, asked as `neutral_caches` asks; inside the workspace
    too, but not in its .git."""
    ask = abilities(suite.runner).reset_caches if suite is not None else None
    git = suite.workdir.rstrip("/") + "/.git" if suite is not None else ""
    return tuple(p for p in _folders(sandbox, suite, ask) if p != git and not p.startswith(git + "/"))


def _folders(sandbox: Sandbox, suite: Suite | None, ask: Callable[[str], str] | None) -> tuple[str, ...]:
    """The folders `ask`'s command prints, each a plain absolute path that neither holds the workspace nor is in
    the harness's scratch; () when there is no command or it fails."""
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
        and not workspace.startswith(path + "/")}))


def _saved(path: str, index: int) -> str:
    """Where a container's reset cache is kept as it was when the container started."""
    return f"{SCRATCH}-reset-{index}-{posixpath.basename(path)}"


def _save(reset: tuple[str, ...]) -> str:
    """Commands keeping each reset cache aside as it is (nothing kept for one that does not exist)."""
    return "".join(f" && rm -rf {shlex.quote(_saved(p, i))} && {{ [ ! -e {shlex.quote(p)} ] || "
                   f"cp -a {shlex.quote(p)} {shlex.quote(_saved(p, i))}; }}" for i, p in enumerate(reset))


def _put_back(reset: tuple[str, ...]) -> str:
    """Commands putting each reset cache back as `_save` kept it (removed, where there was none)."""
    return " && ".join(f"rm -rf {shlex.quote(p)} && {{ [ ! -e {shlex.quote(_saved(p, i))} ] || "
                       f"cp -a {shlex.quote(_saved(p, i))} {shlex.quote(p)}; }}" for i, p in enumerate(reset))


def _mark(sandbox: Sandbox, listing: str = "", neutral: tuple[str, ...] = (),
          reset: tuple[str, ...] = ()) -> tuple[str, str]:
    """(a file whose time is the lease's start, what the container's paths are: `listing` when known, the one
    `unchanged` found when the container was given back, as nothing ran in it since); ("", "") when they cannot
    be had (the container is then never reused). A new container first gets the folders holding its neutral
    caches (a run would make them: they are then not a change) and keeps its reset caches aside."""
    path = f"{SCRATCH}-lease-{uuid.uuid4().hex[:8]}"
    empty = f"mkdir -p {RUN_TMP} && find {RUN_TMP} -mindepth 1 -delete"  # the last validation's temporary files
    if listing:
        result = sandbox.exec(f"{empty} && touch {shlex.quote(path)}", timeout=300)
        return (path, listing) if result.ok else ("", "")
    holders = sorted({posixpath.dirname(p) for p in neutral} - {"/"})
    prepare = "".join(f" && mkdir -p {shlex.quote(h)}" for h in holders) + _save(reset)
    lists = isinstance(sandbox, Changes)
    result = sandbox.exec(f"{empty}{prepare} && touch {shlex.quote(path)} && "
                          f"{_listing((*neutral, *reset), MOUNTED if lists else None)}", timeout=300)
    changes = _changes(sandbox, (*neutral, *reset)) if lists and result.ok else None
    listing = result.stdout if changes is None else f"{_paths(changes)}{result.stdout}"
    return (path, listing) if result.ok and result.stdout.strip() and (changes is not None or not lists) \
        else ("", "")


def unchanged(sandbox: Sandbox, mark: str, listing: str, files: list[str], state: str,
              neutral: tuple[str, ...] = (), reset: tuple[str, ...] = ()) -> bool:
    """No file but `files` and git's index changed since `mark`, the same paths as `listing`, git's status
    `state` again (the `neutral` caches left out, the `reset` ones put back first and left out): one walk of the
    filesystem lists the paths and writes those changed since `mark` aside; where the sandbox lists its root
    filesystem's changes itself, the walk is of the tmpfs alone, and the files changed since the container
    started are the only ones looked at for changes since `mark` (a file changed in any way is in the list)."""
    if reset and not sandbox.exec(_put_back(reset), timeout=300).ok:
        return False
    skipped = (*neutral, *reset)
    changes = _changes(sandbox, skipped)
    quoted = shlex.quote(mark)
    newer, hashed = shlex.quote(f"{mark}-newer"), shlex.quote(f"{mark}-paths")
    separator = f"autoinstall-lease-{uuid.uuid4().hex[:8]}"
    walk = f"{_pruned(skipped, None if changes is None else MOUNTED)} " \
           f"\\( -print , \\( ! -type d -cnewer {quoted} -fprint {newer} \\) \\)"
    also = ""
    if changes is not None:
        if not listing.startswith(_paths(changes)):
            return False
        listed = f"{mark}-changed"
        sandbox.write_file(listed, "".join(f"{p}\0" for kind, p in changes if kind != "D").encode())
        also = (f" && xargs -0 -r -a {shlex.quote(listed)} sh -c 'exec find \"$@\" -maxdepth 0 ! -type d "
                f"-cnewer {quoted} -print' sh >> {newer} && rm -f {shlex.quote(listed)}")
    result = sandbox.exec(f"set -o pipefail && {walk} | {_HASH} > {hashed}{also} && cat {newer} && echo {separator} "
                          f"&& cat {hashed} && echo {separator} && rm -f {quoted} {newer} {hashed} && {STATUS}",
                          timeout=300)
    parts = result.stdout.split(f"{separator}\n")
    found = parts[1] if changes is None or len(parts) != 3 else f"{_paths(changes)}{parts[1]}"
    if not result.ok or len(parts) != 3 or found != listing or f"state\n{parts[2]}" != state:
        return False
    root = sandbox.workdir.rstrip("/")
    allowed = {f"{root}/{f}" for f in files} | {f"{root}/.git/index"}
    return all(path in allowed for path in parts[0].splitlines())
