"""The search op: a regular expression over the workspace's text files, grep-style results."""
from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable
from typing import Any

from .paths import OpError, Workspace, is_binary, iter_files

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_LINE_CHARS = 300
DEFAULT_RESULTS = 100
MAX_RESULTS = 1000
TIME_BUDGET_S = 20.0


def _expand_braces(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out: list[str] = []
    for alt in m.group(1).split(","):
        out += _expand_braces(pattern[:m.start()] + alt + pattern[m.end():])
    return out


def glob_matcher(glob: str | None) -> Callable[[str], bool]:
    """A predicate on workspace-relative paths: patterns with a "/" match the whole path,
    others the file name; `**/` prefixes and `{a,b}` alternatives work."""
    if not glob:
        return lambda rel: True
    pats: list[str] = []
    for p in _expand_braces(glob):
        pats.append(p)
        if "**/" in p:  # `**/` may also match no directory at all
            pats.append(p.replace("**/", ""))

    def match(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(rel if "/" in p else name, p) for p in pats)
    return match


def compile_pattern(pattern: str, fixed_string: bool, case_sensitive: bool) -> re.Pattern:
    if pattern == "":
        raise OpError("pattern is empty; give the text or regular expression to look for")
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    try:
        return re.compile(re.escape(pattern) if fixed_string else pattern, flags)
    except re.error as e:
        raise OpError("invalid regular expression %r: %s. Escape special characters such as ( [ { "
                      "with a backslash, or set fixed_string=true to search for the literal text."
                      % (pattern, e))


def _read_text(path: str) -> str | None:
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if is_binary(data[:8192]):
        return None
    return data.decode("utf-8", "replace")


def op_search(ws: Workspace, pattern: str, path: str | None = None, glob: str | None = None,
              fixed_string: bool = False, case_sensitive: bool = True,
              max_results: int | None = None, files_only: bool = False,
              suffixes: list[str] | None = None) -> dict[str, Any]:
    regex = compile_pattern(pattern, fixed_string, case_sensitive)
    top = ws.resolve(path)
    if not os.path.exists(top):
        raise OpError("%s does not exist (paths are relative to the workspace %s)" % (path, ws.root))
    limit = max(1, min(max_results or DEFAULT_RESULTS, MAX_RESULTS))
    matches, files = [], []
    total, skipped, deadline = 0, 0, time.monotonic() + TIME_BUDGET_S
    want = glob_matcher(glob)
    timed_out = False
    for real in iter_files(ws, top, tuple(suffixes) if suffixes else None):
        rel = ws.rel(real)
        if not want(rel):
            continue
        if time.monotonic() > deadline:
            timed_out = True
            break
        text = _read_text(real)
        if text is None:
            skipped += 1
            continue
        if regex.search(text) is None:
            continue
        if files_only:
            files.append(rel)
            if len(files) >= limit:
                break
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if regex.search(line) is not None:
                total += 1
                if len(matches) < limit:
                    matches.append((rel, n, line[:MAX_LINE_CHARS]))
    if files_only:
        return {"files": files}
    return {"output": _format(pattern, path, matches, total, timed_out), "total": total,
            "matches": [{"file": f, "line": n, "text": t} for f, n, t in matches],
            "skipped_files": skipped}


def _format(pattern: str, path: str | None, matches: list, total: int, timed_out: bool) -> str:
    if not matches:
        return "No matches for %r in %s." % (pattern, path or "the workspace")
    out = "\n".join("%s:%d:%s" % m for m in matches) + "\n"
    if total > len(matches):
        out += ("[%d more matches not shown; narrow your search with path, glob or a more specific "
                "pattern]\n" % (total - len(matches)))
    if timed_out:
        out += "[search stopped after %d s; results are incomplete]\n" % TIME_BUDGET_S
    return out
