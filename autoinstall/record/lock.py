"""One build of an environment at a time: a lock next to its directory, whichever command holds it."""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class BuildLockedError(RuntimeError):
    """Another process is building the same environment (same repository, commit and model)."""


@contextmanager
def build_lock(env_dir: Path) -> Iterator[None]:
    """Hold `ENV_DIR.lock` for the duration of a build; raise at once if another process holds it.

    Raises:
        BuildLockedError: with the other process's pid and what to do.
    """
    env_dir.parent.mkdir(parents=True, exist_ok=True)
    path = env_dir.with_name(env_dir.name + ".lock")
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            msg = (f"{env_dir.name} is being built right now by process {holder} (lock {path}); wait for it "
                   "to finish (`autoinstall catalog show` then has its record), or pass --out DIR to build "
                   "a separate copy.")
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
