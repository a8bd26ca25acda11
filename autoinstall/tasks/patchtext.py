"""A -p1 unified diff applied to texts in memory: what a file reads like after a candidate's bug patch, so the
gold patch can be judged as the grader will judge it (from the bug state to the solved one) before a task is
made of it."""
from __future__ import annotations

import re

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def per_file(patch: str) -> dict[str, list[str]]:
    """path -> the patch's lines for that file (its hunks), by the `+++ b/` name. A `--- ` line is a header
    only when a `+++ ` line follows it (a removed line may start with `--`)."""
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    lines = patch.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            current = None
        elif line.startswith("+++ ") and current is None:
            current = files.setdefault(line[4:].strip().removeprefix("b/"), [])
        elif current is not None and line.startswith(("@@", " ", "+", "-", "\\")):
            current.append(line)
        elif current is not None and line == "":
            current.append(line)
    return files


def applied(text: str, hunks: list[str]) -> str | None:
    """`text` with the hunks applied, or None when a context or removed line does not match (the patch was
    made from another text)."""
    lines = text.splitlines()
    ends_newline = text.endswith("\n") or not text
    out: list[str] = []
    pos = 0
    for line in hunks:
        match = _HUNK.match(line)
        if match:
            start = max(int(match.group(1)) - (0 if match.group(2) == "0" else 1), 0)
            if start < pos or start > len(lines):
                return None
            out.extend(lines[pos:start])
            pos = start
        elif line.startswith("\\"):
            continue
        elif line.startswith("+"):
            out.append(line[1:])
        elif line.startswith(("-", " ")) or line == "":
            body = line[1:] if line else ""
            if pos >= len(lines) or lines[pos] != body:
                return None
            if line.startswith(" ") or line == "":
                out.append(body)
            pos += 1
    out.extend(lines[pos:])
    return "\n".join(out) + ("\n" if ends_newline and out else "")
