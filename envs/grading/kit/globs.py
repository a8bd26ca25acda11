"""Path patterns relative to the workdir: `**` any number of folders, `*` and `?` within one name, `{a,b}`
alternatives. A pattern names the path itself; `dir/**` names the folder and everything under it."""
from __future__ import annotations

import re
from functools import lru_cache


def _braces(pattern: str) -> list:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",") for x in _braces(pattern[:m.start()] + alt + pattern[m.end():])]


def _regex(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


@lru_cache(maxsize=None)
def compile_patterns(patterns: tuple) -> re.Pattern:
    alternatives = [_regex(p) for pattern in patterns for p in _braces(pattern.strip().lstrip("/"))]
    return re.compile("^(?:" + "|".join(alternatives or ["(?!)"]) + ")$")


def first_match(path: str, patterns: tuple) -> str | None:
    """The first pattern naming `path`, else None."""
    if not compile_patterns(patterns).match(path):
        return None
    return next(p for p in patterns if compile_patterns((p,)).match(path))
