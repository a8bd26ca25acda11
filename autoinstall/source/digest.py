"""A content digest that names a checkout when no clean commit does."""
from __future__ import annotations

import hashlib
from pathlib import Path


def tree_digest(root: Path) -> str:
    """sha256 over the relative paths and contents of every file under `root`, .git excluded."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
