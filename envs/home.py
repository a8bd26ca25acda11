"""Where autoinstall keeps its state on the host."""
from __future__ import annotations

import os
from pathlib import Path


def autoinstall_home() -> Path:
    """Environments, logs, caches and the catalog live here: $AUTOINSTALL_HOME or ~/.autoinstall."""
    return Path(os.environ.get("AUTOINSTALL_HOME") or Path.home() / ".autoinstall")


def cache_dir() -> Path:
    """The uv/pip download cache shared by every build on this host."""
    path = autoinstall_home() / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path
