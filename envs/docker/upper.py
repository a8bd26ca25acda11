"""A container's own changes read from its writable layer on this host (overlay2's upper directory), as
`docker container diff` lists them: the engine's diff took 3-5 s a call here (Docker 20.10, a busy machine), a
walk of the upper directory takes a millisecond for the few hundred paths a test run writes."""
from __future__ import annotations

import errno
import os
import stat
from typing import Any

MAX_ENTRIES = 100_000
"""Past this many entries the layer is not read here (None: the caller walks inside the container, under its
limits): what a container writes must not cost this host an unbounded walk."""
OPAQUE = "trusted.overlay.opaque"
"""The extended attribute of a folder that hides everything the layers below hold in it (made anew)."""


def layer_dirs(graph_driver: dict[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """(the upper directory, the lower ones) of a container's `GraphDriver` inspect data, when it is overlay2's
    and this host can read them (the engine runs here, and so do we as root); else None."""
    data = graph_driver.get("Data") or {}
    upper, lower = str(data.get("UpperDir") or ""), str(data.get("LowerDir") or "")
    if graph_driver.get("Name") != "overlay2" or not upper or not os.access(upper, os.R_OK | os.X_OK):
        return None
    lowers = tuple(d for d in lower.split(":") if d)
    return (upper, lowers) if all(os.path.isdir(d) for d in lowers) else None


def _opaque(path: str) -> bool:
    try:
        return os.getxattr(path, OPAQUE, follow_symlinks=False) == b"y"
    except OSError as e:
        if e.errno in (errno.ENODATA, errno.ENOTSUP):
            return False
        raise


def _in_layer(lower: str, path: str) -> bool:
    """Whether the lower layer holds `path`, each component looked at with lstat inside the layer: a link there
    (an image's `/lib -> usr/lib`, or one a build step planted pointing at this host's `/etc`) is never
    followed, so nothing outside the layer is looked at; a path under a link counts as held (changed, not added)."""
    at = lower
    for part in path.strip("/").split("/"):
        at = os.path.join(at, part)
        try:
            st = os.lstat(at)
        except FileNotFoundError:
            return False
        if stat.S_ISLNK(st.st_mode):
            return True
    return True


def layer_changes(upper: str, lowers: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """(kind, path) for every entry of the upper directory: "D" for a whiteout (deleted), "A" for one no lower
    layer holds or a folder made anew (opaque: what the lower ones held in it is gone), "C" otherwise. None when
    the directory cannot be read whole or holds more than MAX_ENTRIES (the caller then looks another way).
    Nothing is followed: os.walk does not enter linked folders and the lower layers are read by `_in_layer`."""
    out: list[tuple[str, str]] = []
    failed: list[OSError] = []
    try:
        for root, dirs, files in os.walk(upper, onerror=failed.append):
            inside = root[len(upper):] or "/"
            for name in dirs + files:
                if len(out) >= MAX_ENTRIES:
                    return None
                host, path = os.path.join(root, name), os.path.join(inside, name)
                st = os.lstat(host)
                if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                    out.append(("D", path))
                elif (stat.S_ISDIR(st.st_mode) and _opaque(host)) or \
                        not any(_in_layer(low, path) for low in lowers):
                    out.append(("A", path))
                else:
                    out.append(("C", path))
    except OSError:
        return None
    return None if failed else out
