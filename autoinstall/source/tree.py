"""Copying a stranger's tree as data: nothing is read across a link, nothing is written through one.

Every entry is looked at with lstat and handled by what it is, never by what it points at:
- a regular file is copied by content, opened with O_NOFOLLOW (its mode bits kept, no owner or times);
- a folder is walked (folders named in `skip_dir` are left out);
- a symbolic link is copied as a link (its target string, never its target's content);
- a FIFO, socket or device is left out with a note (opening a FIFO to read it would block forever);
- a work tree's file over MAX_FILE_BYTES is left out with a note, and a copy stops past MAX_TREE_BYTES (a
  sparse file costs the stranger's disk nothing and this host its full size).

`drop_escaping_links` then removes every link of the copy whose target, resolved inside the copy, leaves it
(`/etc/passwd`, `../../host-secret`, or `s/s/../..` through a link to `.`): later stages read the checkout by
path, and such a link would hand them a host file. Links that stay inside are kept; a link that dangles is kept.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

SPECIAL_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
                 stat.S_IFBLK: "a block device"}
MAX_NOTES_PER_KIND = 20
"""Notes of one kind (left-out links, special files) kept before a single "and N more" note."""
MAX_FILE_BYTES = 1 << 30
"""A work tree's file larger than this is left out (a note says so): no source file is that large (GitHub
refuses one over 100 MiB), and a sparse one, a few KiB on the stranger's disk, is written here in full."""
MAX_TREE_BYTES = 10 << 30
"""What one copy or checkout writes at most, all files together (the sandbox's default disk limit: it could
not hold more); past it the copy stops with `CopyTooLarge`."""


class CopyTooLarge(ValueError):
    """A copy or checkout would write more than MAX_TREE_BYTES; the message says how much it had reached."""


class Notes:
    """What a copy left out, one line each, capped per kind so a hostile tree cannot flood the record."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._counts: dict[str, int] = {}

    def add(self, kind: str, line: str) -> None:
        count = self._counts[kind] = self._counts.get(kind, 0) + 1
        if count <= MAX_NOTES_PER_KIND:
            self.lines.append(line)

    def summary(self) -> list[str]:
        more = [f"and {n - MAX_NOTES_PER_KIND} more {kind} left out" for kind, n in self._counts.items()
                if n > MAX_NOTES_PER_KIND]
        return self.lines + more


def copy_file(src: str, dest: str, mode: int) -> None:
    """Copy a regular file by content (never through a link, never a FIFO), keeping its permission bits."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as reader:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):  # swapped for something else since lstat
            raise OSError(f"{src} is no longer a regular file")
        with open(dest, "xb") as writer:
            shutil.copyfileobj(reader, writer, 1 << 20)
    os.chmod(dest, stat.S_IMODE(mode) & 0o777 | stat.S_IRUSR | stat.S_IWUSR)


def copy_tree(src: Path, dest: Path, notes: Notes, skip_dir: Callable[[str, str], bool] = lambda rel, name: False,
              skip_file: Callable[[str, str], bool] = lambda rel, name: False, *, work_tree: bool = False) -> None:
    """Copy the tree at `src` into `dest` (created if missing), entry by entry by lstat (see the module).

    `skip_dir(rel, name)` / `skip_file(rel, name)` leave out a folder or a file or link by its relative path.
    A `work_tree`'s files over MAX_FILE_BYTES are left out with a note (a git directory's packs are not).

    Raises:
        CopyTooLarge: the files copied pass MAX_TREE_BYTES, by their size (a sparse file's, in full).
    """
    dest.mkdir(parents=True, exist_ok=True)
    written = 0
    stack = [""]
    while stack:
        rel = stack.pop()
        folder = os.path.join(src, rel) if rel else str(src)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as e:
            notes.add("unreadable folders", f"{rel or '.'}: could not be listed ({e.strerror}), left out")
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            target = os.path.join(dest, child)
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as e:
                notes.add("unreadable files", f"{child}: could not be read ({e.strerror}), left out")
                continue
            kind = stat.S_IFMT(st.st_mode)
            if kind == stat.S_IFDIR:
                if not skip_dir(child, entry.name):
                    os.makedirs(target, exist_ok=True)
                    stack.append(child)
            elif skip_file(child, entry.name):
                continue
            elif kind == stat.S_IFLNK:
                os.symlink(os.readlink(entry.path), target)
            elif kind == stat.S_IFREG and work_tree and st.st_size > MAX_FILE_BYTES:
                notes.add("large files", f"{child}: {st.st_size} bytes, over the {MAX_FILE_BYTES >> 20} MiB a "
                                         "file may have, left out")
            elif kind == stat.S_IFREG:
                written += st.st_size
                if written > MAX_TREE_BYTES:
                    msg = f"it holds more than {MAX_TREE_BYTES >> 30} GiB of files (at {child})"
                    raise CopyTooLarge(msg)
                try:
                    copy_file(entry.path, target, st.st_mode)
                except OSError as e:
                    notes.add("unreadable files", f"{child}: could not be read ({e.strerror or e}), left out")
            else:
                notes.add("special files", f"{child}: {SPECIAL_KINDS.get(kind, 'a special file')}, left out")


def _escapes(root: str, link: str) -> bool:
    real = os.path.realpath(link)
    return real != root and not real.startswith(root + os.sep)


def drop_escaping_links(root: Path, notes: Notes, skip_dir: Callable[[str], bool] = lambda rel: rel == ".git") -> None:
    """Remove every link under `root` whose target leaves `root` once resolved (see the module)."""
    top = os.path.realpath(root)
    links = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        rel_folder = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if not skip_dir(os.path.normpath(os.path.join(rel_folder, d)))]
        for name in [*files, *dirs]:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                links.append(path)
    dropped = True
    while dropped:  # dropping one link can only make others dangle, but check again until nothing moves
        dropped = False
        for path in [p for p in links if os.path.lexists(p)]:
            if _escapes(top, path):
                rel = os.path.relpath(path, root)
                notes.add("links", f"{rel}: a link to outside the checkout ({os.readlink(path)[:200]}), left out")
                os.unlink(path)
                dropped = True
