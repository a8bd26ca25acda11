"""One build of an environment at a time, whichever command (run, batch, debug) and output directory."""
from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager

from autoinstall.errors import AutoinstallError
from envs.home import autoinstall_home


class BuildLockedError(AutoinstallError, RuntimeError):
    """Another process is building the same environment (same repository, revision and model)."""


@contextmanager
def build_lock(repo: str, revision: str, model: str, name: str) -> Iterator[None]:
    """Hold the lock of (repo, revision, model) under $AUTOINSTALL_HOME/locks for the duration of a build;
    raise at once if another process holds it. `name` is what the message calls the environment.

    Raises:
        BuildLockedError: with the other process's pid and what to do.
    """
    key = hashlib.sha256("\0".join((repo, revision, model)).encode()).hexdigest()[:16]
    path = autoinstall_home() / "locks" / f"build-{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            msg = (f"{name} is being built right now by process {holder} (lock {path}); wait for it to "
                   "finish: `autoinstall catalog list` then has its record.")
            raise BuildLockedError(msg) from None
        try:
            f.seek(0)
            f.truncate()
            f.write(str(os.getpid()))
            f.flush()
            yield
        finally:
            f.seek(0)
            f.truncate()
            fcntl.flock(f, fcntl.LOCK_UN)
