"""Two directory trees compared and mended without following a link: the start state and the agent's tree.

Every read is an lstat or an open with O_NOFOLLOW; a symlink is data (its target is never visited), FIFOs,
sockets and devices are noted and never opened. Caps bound what an agent's tree can cost the grader.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass

MAX_ENTRIES = 500_000
"""Paths one tree may hold; more is a tree the grader refuses (a fork of files, not a change)."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""A changed file larger than this is never carried over."""
CHUNK = 1 << 16


class TreeTooLarge(Exception):
    """A tree has more entries than MAX_ENTRIES."""


@dataclass(frozen=True)
class Entry:
    kind: str
    """file, dir, link or special (FIFO, socket, device)."""
    size: int = 0
    mode: int = 0
    mtime_ns: int = 0
    ino: int = 0


def entry(st: os.stat_result) -> Entry:
    mode = st.st_mode
    kind = ("link" if stat.S_ISLNK(mode) else "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode)
            else "special")
    return Entry(kind, st.st_size, stat.S_IMODE(mode), st.st_mtime_ns, st.st_ino)


def lstat_entry(path: str) -> Entry | None:
    try:
        return entry(os.lstat(path))
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None


def walk(root: str, skip=None) -> dict:
    """relative path -> Entry for everything under `root` (not `root` itself); a directory for which
    `skip(relative path)` is true is listed but not entered. Raises TreeTooLarge past MAX_ENTRIES."""
    found: dict = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                children = list(it)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for child in children:
            path = f"{rel}/{child.name}" if rel else child.name
            try:
                found[path] = entry(child.stat(follow_symlinks=False))
            except FileNotFoundError:
                continue
            if len(found) > MAX_ENTRIES:
                msg = f"{root} holds more than {MAX_ENTRIES} entries"
                raise TreeTooLarge(msg)
            if found[path].kind == "dir" and not (skip and skip(path)):
                stack.append(path)
    return found


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """A regular file's bytes (never through a link), None when it is not one or is larger than `limit`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                return None
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def digest(path: str) -> str | None:
    """sha256 of a regular file (no link followed), None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return h.hexdigest()
            h.update(chunk)
    finally:
        os.close(fd)


def same_file(a: str, b: str) -> bool:
    """Equal bytes (both regular files; links never followed)."""
    ea, eb = lstat_entry(a), lstat_entry(b)
    if ea is None or eb is None or ea.kind != "file" or eb.kind != "file" or ea.size != eb.size:
        return False
    return digest(a) == digest(b)


def remove(path: str) -> None:
    """Remove a file, link or whole tree at `path` (a link is removed, never followed); absent is fine."""
    e = lstat_entry(path)
    if e is None:
        return
    if e.kind == "dir":
        shutil.rmtree(path)
    else:
        os.unlink(path)


def copy(src: str, dst: str) -> None:
    """Copy `src` (file, link or tree, from the start state: trusted) to `dst`, replacing what is there;
    owners, modes and times kept."""
    remove(dst)
    parent = os.path.dirname(dst)
    if parent:
        os.makedirs(parent, exist_ok=True)
    e = lstat_entry(src)
    if e is None:
        return
    if e.kind == "dir":
        shutil.copytree(src, dst, symlinks=True)
    elif e.kind == "link":
        os.symlink(os.readlink(src), dst)
    elif e.kind == "file":
        shutil.copy2(src, dst, follow_symlinks=False)
    st = os.lstat(src)
    os.chown(dst, st.st_uid, st.st_gid, follow_symlinks=False)
    if e.kind == "dir":
        for root, dirs, files in os.walk(src):
            for name in dirs + files:
                s = os.path.join(root, name)
                d = os.path.join(dst, os.path.relpath(s, src))
                st = os.lstat(s)
                os.chown(d, st.st_uid, st.st_gid, follow_symlinks=False)
