"""How many forks a container's pids limit has refused, read on the host from the container's own cgroup:
no `docker exec` (every test run asks twice, before and after, and an exec costs three engine round trips).
"""

from __future__ import annotations

import re
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def events_file(init_pid: int, proc: Path = Path("/proc"), root: Path = CGROUP_ROOT) -> Path | None:
    """The pids.events file of the cgroup process `init_pid` is in (cgroup v1's pids hierarchy, else v2's
    unified one); None when this host cannot see it (an engine on another machine or in another namespace)."""
    try:
        lines = (proc / str(init_pid) / "cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            candidate = root / "pids" / path.lstrip("/") / "pids.events"
            if candidate.is_file():
                return candidate
    unified = next((line.split(":", 2)[2] for line in lines if line.startswith("0::")), None)
    candidate = root / unified.lstrip("/") / "pids.events" if unified is not None else None
    return candidate if candidate is not None and candidate.is_file() else None


def refused(events: Path) -> int | None:
    """The `max N` count of a pids.events file; None when it cannot be read (the container is gone)."""
    try:
        match = re.search(r"^max (\d+)$", events.read_text(), re.M)
    except OSError:
        return None
    return int(match.group(1)) if match else None
