"""The grading tree made: the start state plus the accepted part of the agent's change, owned by the test user,
the task's own files root's and read-only to it. Never a write through a link the agent left."""
from __future__ import annotations

import os
import stat
import time

from . import trees
from .changes import Change, Policy, bulky, walk


def ensure_dir(work: str, rel: str, uid: int, gid: int) -> str:
    """work/rel as a real directory: every part of it that is not one (a link, a file) is replaced by a new
    directory owned by the test user. Returns its path."""
    path = work
    for part in [p for p in rel.split("/") if p]:
        path = os.path.join(path, part)
        e = trees.lstat_entry(path)
        if e is not None and e.kind == "dir":
            continue
        trees.remove(path)
        os.mkdir(path, 0o755)
        os.chown(path, uid, gid)
    return path


def write_file(work: str, rel: str, data: bytes, mode: int, uid: int, gid: int) -> None:
    """Replace work/rel with a new regular file holding `data` (parents made real directories first)."""
    parent = ensure_dir(work, os.path.dirname(rel), uid, gid)
    path = os.path.join(parent, os.path.basename(rel))
    trees.remove(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchown(fd, uid, gid)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    now = time.time()
    os.utime(path, (now, now))  # newer than any build output: whatever was built from the start rebuilds


def restore(start: str, work: str, rel: str, uid: int, gid: int) -> None:
    """work/rel as the start has it (absent when the start has nothing there)."""
    ensure_dir(work, os.path.dirname(rel), uid, gid)
    source = os.path.join(start, rel)
    if trees.lstat_entry(source) is None:
        trees.remove(os.path.join(work, rel))
    else:
        trees.copy(source, os.path.join(work, rel))


def reset_bulky(start: str, work: str, policy: Policy, ours: dict, trust_times: bool, uid: int,
                gid: int) -> list:
    """In the agent's own tree: every untransferred folder made the start's again (replaced whole, unless
    `trust_times` and every entry has the start's type, size and time: a patch cannot forge those). Returns
    the folders replaced."""
    theirs = walk(work, policy)
    replaced = []
    for rel in sorted(bulky(ours, policy) | bulky(theirs, policy)):
        if any(rel.startswith(done + "/") for done in replaced):
            continue
        s_path, w_path = os.path.join(start, rel), os.path.join(work, rel)
        if rel in ours and trust_times and _same_stats(s_path, w_path):
            continue
        restore(start, work, rel, uid, gid)
        replaced.append(rel)
    return replaced


def _same_stats(a: str, b: str) -> bool:
    if trees.lstat_entry(b) is None or trees.lstat_entry(b).kind != "dir":
        return False
    left, right = trees.walk(a), trees.walk(b)
    return left.keys() == right.keys() and all(
        (x.kind, x.size, x.mtime_ns) == (right[k].kind, right[k].size, right[k].mtime_ns) for k, x in left.items())


def apply(changes: list, start: str, work: str, in_place: bool, ours: dict, uid: int, gid: int) -> None:
    """Make `work` the start plus the accepted changes. in_place: `work` is the agent's tree (dropped changes
    are undone there); else `work` holds the start state (accepted changes are made there)."""
    undone: list = []
    for change in changes:
        rel = change.path
        if any(rel.startswith(u + "/") for u in undone):
            continue
        if not change.accepted:
            if in_place:
                restore(start, work, rel, uid, gid)
                undone.append(rel)
            continue
        if change.kind == "deleted":
            if not in_place:
                trees.remove(os.path.join(work, rel))
            continue
        before = ours.get(rel)
        mode = before.mode if before is not None and before.kind == "file" else 0o644
        write_file(work, rel, change.content or b"", mode, uid, gid)


def own(work: str, uid: int, gid: int) -> None:
    """Everything in `work` owned by the test user (only what is not already: no needless copy-up)."""
    for root, dirs, files in os.walk(work, followlinks=False):
        for name in [*dirs, *files, ""]:
            path = os.path.join(root, name) if name else root
            st = os.lstat(path)
            if (st.st_uid, st.st_gid) != (uid, gid):
                os.chown(path, uid, gid, follow_symlinks=False)


def lock(work: str, policy: Policy) -> dict:
    """The task's own files in `work` (protected, outside untransferred folders) made root's and read-only to
    the test user; returns what they are now (for `changed_since`)."""
    seen = {}
    for rel, e in walk(work, policy).items():
        if e.kind == "dir" or policy.in_bulky(rel) or not policy.protects(rel):
            continue
        path = os.path.join(work, rel)
        os.chown(path, 0, 0, follow_symlinks=False)
        if e.kind == "file":
            os.chmod(path, e.mode & ~(stat.S_IWGRP | stat.S_IWOTH))
        seen[rel] = _identity(path)
    return seen


def _identity(path: str) -> tuple | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_uid


def changed_since(work: str, seen: dict) -> list:
    """The locked files the test run changed, replaced or removed."""
    return sorted(rel for rel, identity in seen.items() if _identity(os.path.join(work, rel)) != identity)


__all__ = ["Change", "apply", "changed_since", "ensure_dir", "lock", "own", "reset_bulky", "restore", "write_file"]
