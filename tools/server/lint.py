"""The lint op: Python diagnostics here (ast), other languages' files listed for the host."""
from __future__ import annotations

import os
from typing import Any

from .paths import OpError, Workspace, iter_files
from .pycheck import check_source

MAX_FILES = 500
MAX_FILE_BYTES = 2 * 1024 * 1024
PY_SUFFIXES = (".py", ".pyi")


def op_lint(ws: Workspace, path: str | None = None, max_files: int = MAX_FILES,
            other_suffixes: list[str] | None = None) -> dict[str, Any]:
    """Diagnostics for Python files under `path`; paths of files with `other_suffixes` are
    returned in "other" so the host can parse them (tree-sitter lives on the host)."""
    top = ws.resolve(path)
    if not os.path.exists(top):
        raise OpError("%s does not exist (paths are relative to the workspace %s)" % (path, ws.root))
    suffixes = PY_SUFFIXES + tuple(other_suffixes or ())
    diagnostics: list[dict[str, Any]] = []
    other: list[str] = []
    checked, more = 0, False
    for real in iter_files(ws, top, suffixes):
        if checked >= max_files:
            more = True
            break
        checked += 1
        rel = ws.rel(real)
        if not real.endswith(PY_SUFFIXES):
            other.append(rel)
            continue
        try:
            if os.path.getsize(real) > MAX_FILE_BYTES:
                continue
            with open(real, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        for d in check_source(data.decode("utf-8", "replace"), rel):
            d["file"] = rel
            diagnostics.append(d)
    return {"diagnostics": diagnostics, "other": other, "files_checked": checked,
            "more_files": more}
