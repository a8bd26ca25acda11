"""Workspace confinement and small file helpers shared by the ops."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
                       ".pytest_cache", ".hg", ".svn", ".nox", ".ruff_cache"})
SNIFF_BYTES = 8192


class OpError(Exception):
    """A failure the model can act on; sent back as {"ok": false, "error": message}."""


class Workspace:
    """Resolves user-given paths inside one root directory and refuses the rest."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)

    def resolve(self, path: str | None) -> str:
        """Absolute real path of `path` (relative to the root); OpError when it leads outside."""
        path = path if path not in (None, "") else "."
        if "\0" in path:
            raise OpError("path contains a NUL byte")
        joined = os.path.normpath(os.path.join(self.root, path))
        real = os.path.realpath(joined)
        if not self.inside(real):
            how = " through a symlink" if self.inside(joined) else ""
            raise OpError(
                "path %r leads outside the workspace %s%s; only files under the workspace can be "
                "used (give a path relative to it)" % (path, self.root, how))
        return real

    def rel(self, real: str) -> str:
        """The path relative to the root, for messages and results."""
        return os.path.relpath(real, self.root)

    def inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root.rstrip("/") + "/")


def is_binary(head: bytes) -> bool:
    """True when the first bytes of a file look binary (a NUL byte, as git and grep judge)."""
    return b"\0" in head


def sniff(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(SNIFF_BYTES)


def write_atomic(path: str, data: bytes) -> None:
    """Write via a temp file in the same directory and os.replace; keeps an existing file's mode."""
    directory = os.path.dirname(path) or "."
    try:
        st = os.stat(path)
        mode, owner = st.st_mode & 0o7777, (st.st_uid, st.st_gid)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode, owner = 0o666 & ~umask, None
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        if owner is not None:
            try:
                os.chown(tmp, owner[0], owner[1])
            except OSError:
                pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_PREFIXES = ["%6d\t" % i for i in range(2048)]
"""Line-number prefixes, made once: numbering the lines of a read is then one join."""


def numbered(lines: list[str], first: int) -> str:
    """`cat -n` style: right-aligned line numbers, a tab, the line."""
    if not lines:
        return ""
    end = first + len(lines)
    prefixes = _PREFIXES[first:end] if end <= len(_PREFIXES) else ["%6d\t" % i for i in range(first, end)]
    return "\n".join(map(str.__add__, prefixes, lines)) + "\n"


def iter_files(ws: Workspace, top: str, suffixes: tuple | None = None) -> Iterator[str]:
    """Real paths of regular files under `top` (a file or directory), skipping SKIP_DIRS and
    symlinks that lead outside the workspace; directories are walked in sorted order."""
    if os.path.isfile(top):
        yield top
        return
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for e in entries:
            try:
                if e.is_symlink():
                    real = os.path.realpath(e.path)
                    if not ws.inside(real) or os.path.isdir(real):
                        continue
                    if e.is_file():
                        if suffixes is None or e.name.endswith(suffixes):
                            yield e.path
                    continue
                if e.is_dir(follow_symlinks=False):
                    if e.name not in SKIP_DIRS:
                        subdirs.append(e.path)
                elif e.is_file(follow_symlinks=False):
                    if suffixes is None or e.name.endswith(suffixes):
                        yield e.path
            except OSError:
                continue
        stack.extend(reversed(subdirs))
