"""Resets in place and forks without a commit: one container's file system is made equal to another's by
copying files on this host, where the engine keeps them (overlay2), instead of starting or committing one.

`sync(guide, source, target)` visits only the paths under `guide`, a container's overlay upper directory:
the paths that container changed against its image (whiteouts and opaque directories included, as the
listing of every directory visited is compared both ways). Everywhere else the two containers still show
their common image, so they are equal already.
- reset in place: guide = the episode's upper dir, source = a pristine container of the same image
  (envs/runtime/docker_backend.py `Pristine`, one per image, never used), target = the episode's root. Its
  processes are killed first by the tool server's `reset` op (tools/server/reset.py).
- fork: guide = the parent's upper dir, source = the parent's root, target = a fresh container's root.
Paths where the engine mounts something (/etc/hosts, /tmp, the channel...) are never touched.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ALWAYS_MOUNTED = ("/proc", "/sys", "/dev", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf")
CHUNK = 1 << 16


@dataclass(frozen=True)
class HostView:
    """A running container's file system on this host."""

    upper: Path
    """Its overlay upper directory: what it changed against its image."""
    merged: Path
    """Its root directory."""
    skip: frozenset[str] = field(default_factory=frozenset)
    """Paths relative to the root where the engine mounts something: left alone."""

    @classmethod
    def of(cls, sandbox: Any) -> HostView | None:
        """The view of a started DockerSandbox, or None when its files are not reachable from here."""
        view = sandbox.host_view() if hasattr(sandbox, "host_view") else None
        if view is None:
            return None
        skip = {m.strip("/") for m in [*view["mounts"], *ALWAYS_MOUNTED]}
        return cls(Path(view["upper"]), Path(view["merged"]), frozenset(s for s in skip if s))


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _same_bytes(a: Path, b: Path) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(CHUNK), fb.read(CHUNK)
            if x != y:
                return False
            if not x:
                return True


def _owner_mode(src: os.stat_result, dst: Path, follow: bool = True) -> None:
    os.chown(dst, src.st_uid, src.st_gid, follow_symlinks=follow)
    if follow:
        os.chmod(dst, stat.S_IMODE(src.st_mode))


def _remove(path: Path, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _copy(src: Path, dst: Path, st: os.stat_result) -> None:
    """Copy `src` (a file, link, directory tree or device node) to the absent `dst`, owners and modes kept."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        os.symlink(os.readlink(src), dst)
        _owner_mode(st, dst, follow=False)
    elif stat.S_ISDIR(mode):
        os.mkdir(dst)
        for entry in os.scandir(src):
            _copy(Path(entry.path), dst / entry.name, entry.stat(follow_symlinks=False))
        _owner_mode(st, dst)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif stat.S_ISREG(mode):
        shutil.copyfile(src, dst, follow_symlinks=False)
        _owner_mode(st, dst)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        os.mknod(dst, mode, st.st_rdev)
        _owner_mode(st, dst)
    # a socket file is not copied: nothing listens on it in the target


def _fix(src: Path, dst: Path) -> bool:
    """Make `dst` equal `src` (either may be absent); True when both are directories (look inside)."""
    s, t = _lstat(src), _lstat(dst)
    if s is None:
        if t is not None:
            _remove(dst, t)
        return False
    if t is not None and stat.S_IFMT(s.st_mode) == stat.S_IFMT(t.st_mode):
        same_owner = (s.st_uid, s.st_gid) == (t.st_uid, t.st_gid)
        if stat.S_ISDIR(s.st_mode):
            if not same_owner or s.st_mode != t.st_mode:
                _owner_mode(s, dst)
            return True
        if stat.S_ISLNK(s.st_mode):
            if same_owner and os.readlink(src) == os.readlink(dst):
                return False
        elif stat.S_ISREG(s.st_mode):
            if same_owner and s.st_mode == t.st_mode and s.st_size == t.st_size and _same_bytes(src, dst):
                if s.st_mtime_ns != t.st_mtime_ns:  # `touch`ed only: build tools and caches go by mtimes
                    os.utime(dst, ns=(s.st_atime_ns, s.st_mtime_ns))
                return False
        elif same_owner and s.st_mode == t.st_mode and s.st_rdev == t.st_rdev:
            return False
    if t is not None:
        _remove(dst, t)
    _copy(src, dst, s)
    return False


def sync(guide: Path, source: Path, target: Path, skip: frozenset[str] = frozenset()) -> int:
    """Make `target` equal `source` under every directory `guide` has (see the module docstring); returns how
    many directories were visited. Raises OSError when a path cannot be fixed (the caller starts afresh)."""
    for root in (source, target):
        if not (root / "etc").is_dir():  # a container's root that is gone (or unmounted) reads as empty
            raise FileNotFoundError(f"{root} is not a container's root file system (no etc/): is it still running?")
    visited = 0
    stack = [""]
    while stack:
        rel = stack.pop()
        visited += 1
        names = set(os.listdir(guide / rel)) if (guide / rel).is_dir() else set()
        for side in (source, target):  # whiteouts and opaque dirs: what one side lacks
            try:
                names |= set(os.listdir(side / rel))
            except (FileNotFoundError, NotADirectoryError):
                pass
        for name in sorted(names):
            child = f"{rel}/{name}" if rel else name
            if child in skip:
                continue
            in_guide = _lstat(guide / child) is not None
            src, dst = source / child, target / child
            if not in_guide and _lstat(src) is not None and _lstat(dst) is not None:
                continue  # neither changed it: both still show the image's
            if _fix(src, dst) and in_guide and (guide / child).is_dir() and not (guide / child).is_symlink():
                stack.append(child)
        times = _lstat(source / rel)  # the entries changed: the directory's times are the source's again
        if times is not None and stat.S_ISDIR(times.st_mode):
            os.utime(target / rel, ns=(times.st_atime_ns, times.st_mtime_ns), follow_symlinks=False)
    return visited
