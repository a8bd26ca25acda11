"""A content digest that names a checkout when no clean commit does."""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def tree_digest(root: Path) -> str:
    """sha256 over the relative paths and contents of every file under `root`, .git excluded, by lstat: a
    link counts by its target string (never what it points at), anything but a file or a link not at all."""
    digest = hashlib.sha256()
    entries = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d != ".git"]
        entries += [Path(folder, name) for name in [*files, *(d for d in dirs if os.path.islink(Path(folder, d)))]]
    for path in sorted(entries, key=lambda p: p.relative_to(root).as_posix()):
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            content = b"link:" + os.fsencode(os.readlink(path))
        elif stat.S_ISREG(st.st_mode):
            content = path.read_bytes()
        else:
            continue
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + content + b"\0")
    return digest.hexdigest()
