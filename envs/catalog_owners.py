"""Owners of `running` catalog records: host:pid:token of the process building them.

A record whose owner is gone counts as not done, so the next batch builds it again. `envs.catalog`
re-exports these; import them from there.
"""
from __future__ import annotations

import os
import socket
import uuid

_LIVE_OWNERS: set[str] = set()
"""Owners (batch runs) alive in this process; other processes are checked by pid."""


def new_owner() -> str:
    """An owner tag for running records, alive until `release_owner`."""
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    _LIVE_OWNERS.add(owner)
    return owner


def release_owner(owner: str) -> None:
    _LIVE_OWNERS.discard(owner)


def owner_alive(owner: str) -> bool:
    """Whether the process that wrote a running record still runs (another host's: assumed alive)."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    host, pid = parts[0], int(parts[1])
    if host != socket.gethostname():
        return True
    if pid == os.getpid():
        return owner in _LIVE_OWNERS
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
