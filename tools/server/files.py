"""File ops: read (numbered, capped, streamed), read_raw (for host-side parsing), edit, create."""
from __future__ import annotations

import os
import stat
from typing import Any

from .paths import SNIFF_BYTES, OpError, Workspace, is_binary, numbered, write_atomic
from .pycheck import syntax_error

MAX_LINES = 2000
MAX_OUTPUT = 100 * 1024
MAX_LINE_CHARS = 2000
SLURP_BYTES = 1 << 20
"""Files up to this size are read and decoded in one go."""
LIST_ENTRIES = 200
MAX_EDIT_BYTES = 10 * 1024 * 1024
RAW_CAP = 1024 * 1024
RAW_BUDGET = 8 * 1024 * 1024
SNIPPET_CONTEXT = 4


def _stat_target(ws: Workspace, path: str) -> str:
    real = ws.resolve(path)
    if not os.path.lexists(real):
        raise OpError("%s does not exist (paths are relative to the workspace %s)" % (path, ws.root))
    return real


def _listing(ws: Workspace, real: str, path: str) -> str:
    try:
        names = sorted(os.listdir(real))
    except OSError as e:
        raise OpError("cannot list directory %s: %s" % (path, e.strerror))
    shown = [n + ("/" if os.path.isdir(os.path.join(real, n)) else "") for n in names[:LIST_ENTRIES]]
    more = len(names) - len(shown)
    tail = "\n[... %d more entries]" % more if more > 0 else ""
    return "%s is a directory (%d entries); read a file inside it instead:\n%s%s" % (
        path, len(names), "\n".join(shown), tail)


def _read_line(f: Any) -> bytes | None:
    """The next line, cut at MAX_LINE_CHARS*4 bytes; the rest of an overlong line is skipped."""
    line = f.readline(MAX_LINE_CHARS * 4)
    if not line:
        return None
    if not line.endswith(b"\n") and len(line) == MAX_LINE_CHARS * 4:
        while True:
            rest = f.readline(1 << 16)
            if not rest or rest.endswith(b"\n"):
                break
    return line


def _open_inside(ws: Workspace, path: str) -> tuple[int, int] | None:
    """(fd, size) of `path` opened for reading when it is a regular file inside the workspace, else None (the
    caller then takes the slow path, which says what is wrong). One open and one readlink of what was opened,
    instead of a lstat per path component."""
    if not path or "\0" in path:
        return None
    try:
        fd = os.open(os.path.join(ws.root, path), os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and ws.inside(os.readlink("/proc/self/fd/%d" % fd)):
            return fd, st.st_size
    except OSError:
        pass
    os.close(fd)
    return None


def op_read(ws: Workspace, path: str, start_line: int | None = None,
            end_line: int | None = None) -> dict[str, Any]:
    start = max(1, start_line or 1)
    opened = _open_inside(ws, path) if end_line is None or end_line >= start else None
    if opened is not None:
        with open(opened[0], "rb") as f:
            return _read_text(f, path, opened[1], start, end_line)
    real = _stat_target(ws, path)
    if os.path.isdir(real):
        return {"output": _listing(ws, real, path), "kind": "directory"}
    if not os.path.isfile(real):
        raise OpError("%s is not a regular file" % path)
    if end_line is not None and end_line < start:
        raise OpError("end_line (%d) is before start_line (%d)" % (end_line, start))
    size = os.path.getsize(real)
    try:
        with open(real, "rb") as f:
            return _read_text(f, path, size, start, end_line)
    except PermissionError:
        raise OpError("permission denied reading %s" % path)


def _read_text(f: Any, path: str, size: int, start: int, end_line: int | None) -> dict[str, Any]:
    """The numbered lines of an open file, or a note that it is binary (one read for a small file)."""
    head = f.read() if size <= SLURP_BYTES else f.read(SNIFF_BYTES)  # read(): one buffer of the file's size
    if is_binary(head[:SNIFF_BYTES]):
        return {"output": "%s is a binary file (%d bytes); it cannot be shown as text." % (
            path, size), "kind": "binary"}
    if size <= SLURP_BYTES:
        return _read_lines(f, path, size, start, end_line, head)
    f.seek(0)
    return _read_lines(f, path, size, start, end_line)


def _slurp_lines(data: bytes, start: int, end: int | None) -> tuple[list[str], int, bool]:
    """A whole small file at once: (lines start..end, lines counted, clipped). The same result as the
    line-by-line loop below, several times faster (one read, one decode)."""
    raw = data.split(b"\n")
    if raw[-1] == b"":
        raw.pop()
    limit = len(raw) if end is None else min(end, len(raw))
    n = limit if limit == len(raw) else limit + 1
    stop = min(limit, start - 1 + MAX_LINES)
    chunk = b"\n".join(raw[start - 1:stop]).decode("utf-8", "replace") if stop >= start else ""
    lines = chunk.split("\n") if stop >= start else []
    clipped = stop < limit
    if "\r" in chunk:
        lines = [t.rstrip("\r") for t in lines]
    if len(chunk) > MAX_LINE_CHARS and max(map(len, lines)) > MAX_LINE_CHARS:
        lines = [t if len(t) <= MAX_LINE_CHARS else
                 t[:MAX_LINE_CHARS] + " [... line cut at %d characters]" % MAX_LINE_CHARS for t in lines]
    if len(chunk) + 8 * len(lines) > MAX_OUTPUT:  # chunk is at least the lines: count them only then
        used = 0
        for i, text in enumerate(lines):
            if used >= MAX_OUTPUT:
                del lines[i:]
                return lines, n, True
            used += len(text) + 8
    return lines, n, clipped


def _read_lines(f: Any, path: str, size: int, start: int, end: int | None,
                data: bytes | None = None) -> dict[str, Any]:
    lines: list[str] = []
    used, n, clipped = 0, 0, False
    if data is not None:
        lines, n, clipped = _slurp_lines(data, start, end)
        size = len(data)
    while data is None:
        raw = _read_line(f)
        if raw is None:
            break
        n += 1
        if n < start:
            continue
        if end is not None and n > end:
            break
        if len(lines) >= MAX_LINES or used >= MAX_OUTPUT:
            clipped = True
            break
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + " [... line cut at %d characters]" % MAX_LINE_CHARS
        lines.append(text)
        used += len(text) + 8
    if not lines:
        if n == 0:
            return {"output": "%s is empty." % path, "kind": "text", "lines": 0}
        if n < start:
            raise OpError("start_line %d is past the end of %s (%d lines)" % (start, path, n))
    out = numbered(lines, start)
    last = start + len(lines) - 1
    if clipped:
        out += ("[... output clipped after line %d of %s (%d bytes in all); call read_file with "
                "start_line=%d to read further, or use search to find what you need]\n" % (
                    last, path, size, last + 1))
    return {"output": out, "kind": "text", "first_line": start, "last_line": last, "clipped": clipped}


def op_read_raw(ws: Workspace, paths: list[str], max_bytes: int = RAW_CAP,
                budget: int = RAW_BUDGET) -> dict[str, Any]:
    """Contents of text files for host-side parsing: {path: text}; binary or oversized files are
    skipped, and paths past the total byte budget come back in "deferred" to ask for again."""
    files: dict[str, str] = {}
    skipped: dict[str, str] = {}
    used = 0
    for i, p in enumerate(paths):
        if used >= budget:
            return {"files": files, "skipped": skipped, "deferred": paths[i:]}
        try:
            real = ws.resolve(p)
            if not os.path.isfile(real):
                skipped[p] = "not a file"
                continue
            if os.path.getsize(real) > max_bytes:
                skipped[p] = "larger than %d bytes" % max_bytes
                continue
            with open(real, "rb") as f:
                data = f.read(max_bytes)
            if is_binary(data[:8192]):
                skipped[p] = "binary"
                continue
            files[p] = data.decode("utf-8", "replace")
            used += len(data)
        except (OpError, OSError) as e:
            skipped[p] = str(e)
    return {"files": files, "skipped": skipped, "deferred": []}


def _load_text(ws: Workspace, path: str) -> tuple[str, str]:
    real = _stat_target(ws, path)
    if os.path.isdir(real):
        raise OpError("%s is a directory; edit_file needs a file" % path)
    if os.path.getsize(real) > MAX_EDIT_BYTES:
        raise OpError("%s is larger than %d MB; edit it with terminal tools instead" % (
            path, MAX_EDIT_BYTES >> 20))
    with open(real, "rb") as f:
        data = f.read()
    if is_binary(data[:8192]):
        raise OpError("%s is a binary file; edit_file only edits text" % path)
    try:
        return real, data.decode("utf-8")
    except UnicodeDecodeError:
        raise OpError("%s is not UTF-8 text; edit it with terminal tools instead" % path)


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _snippet(text: str, first: int, last: int) -> str:
    lines = text.split("\n")
    lo = max(1, first - SNIPPET_CONTEXT)
    hi = min(len(lines), last + SNIPPET_CONTEXT)
    return numbered(lines[lo - 1:hi], lo)


def _python_check(real: str, before: str | None, after: str) -> dict[str, Any] | None:
    """The syntax error the new text has and the old one did not (Python files only)."""
    if not real.endswith((".py", ".pyi")):
        return None
    err = syntax_error(after, real)
    if err is None or (before is not None and syntax_error(before, real) == err):
        return None
    return err


def op_edit(ws: Workspace, path: str, old_str: str, new_str: str, replace_all: bool = False,
            want_text: bool = False) -> dict[str, Any]:
    if old_str == "":
        raise OpError("old_str is empty; give the exact text to replace (use create_file to write "
                      "a whole new file)")
    if old_str == new_str:
        raise OpError("old_str and new_str are identical; nothing to change")
    real, text = _load_text(ws, path)
    count = text.count(old_str)
    if count == 0:
        hint = ""
        if old_str.strip() and old_str.strip() in text:
            hint = " (it does occur with different leading/trailing whitespace; copy it exactly)"
        raise OpError("old_str was not found in %s%s; nothing changed. Read the file and copy the "
                      "text exactly, including indentation." % (path, hint))
    starts, i = [], text.find(old_str)
    while i != -1:
        starts.append(i)
        i = text.find(old_str, i + len(old_str))
    lines = [_line_of(text, s) for s in starts]
    if count > 1 and not replace_all:
        shown = ", ".join(str(n) for n in lines[:20]) + (", ..." if len(lines) > 20 else "")
        raise OpError("old_str occurs %d times in %s (lines %s); nothing changed. Include more "
                      "surrounding lines to make it unique, or set replace_all=true to replace "
                      "every occurrence." % (count, path, shown))
    new_text = text.replace(old_str, new_str) if replace_all else text.replace(old_str, new_str, 1)
    write_atomic(real, new_text.encode("utf-8"))
    first = _line_of(new_text, starts[0])
    last = first + new_str.count("\n")
    where = "line %d" % lines[0] if count == 1 else "%d places (lines %s)" % (
        count, ", ".join(str(n) for n in lines[:20]))
    out = "Edited %s: replaced %s. The file now reads:\n%s" % (
        path, where, _snippet(new_text, first, last))
    result: dict[str, Any] = {"output": out, "replacements": count, "lines": lines,
                              "syntax_error": _python_check(real, text, new_text)}
    if want_text and len(text) <= RAW_CAP and len(new_text) <= RAW_CAP:
        result["before"], result["after"] = text, new_text
    return result


def op_create(ws: Workspace, path: str, content: str, overwrite: bool = False) -> dict[str, Any]:
    real = ws.resolve(path)
    existed = os.path.lexists(real)
    if os.path.isdir(real):
        raise OpError("%s is a directory; give a file path" % path)
    if existed and not overwrite:
        raise OpError("%s already exists; nothing changed. Use edit_file to change it, or set "
                      "overwrite=true to replace it entirely." % path)
    parent = os.path.dirname(real)
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise OpError("cannot create %s: %s is a file, not a directory" % (path, ws.rel(parent)))
    os.makedirs(parent, exist_ok=True)
    write_atomic(real, content.encode("utf-8"))
    n = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    out = "%s %s (%d lines, %d bytes)." % ("Overwrote" if existed else "Created", path, n,
                                           len(content.encode("utf-8")))
    return {"output": out, "created": not existed, "syntax_error": _python_check(real, None, content)}
