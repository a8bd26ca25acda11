"""lint: syntax errors for every language tree-sitter parses, plus Python's undefined names.

Python is checked in the server with the sandbox's own interpreter (`ast`); other languages'
files are fetched and parsed here on the host, where tree-sitter is installed.
"""
from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from functools import cache
from typing import Any

import tree_sitter
from pydantic import Field

from tools.base import ToolArgs, ToolResult, ToolSpec, summary
from tools.session import ToolSession

GRAMMARS: dict[str, tuple[str, str]] = {
    ".py": ("tree_sitter_python", "language"), ".pyi": ("tree_sitter_python", "language"),
    ".js": ("tree_sitter_javascript", "language"), ".mjs": ("tree_sitter_javascript", "language"),
    ".cjs": ("tree_sitter_javascript", "language"), ".jsx": ("tree_sitter_javascript", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"),
    ".mts": ("tree_sitter_typescript", "language_typescript"),
    ".cts": ("tree_sitter_typescript", "language_typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".go": ("tree_sitter_go", "language"), ".rs": ("tree_sitter_rust", "language"),
    ".java": ("tree_sitter_java", "language"),
}
NON_PYTHON = sorted(s for s in GRAMMARS if not s.startswith(".py"))
MAX_ERRORS_PER_FILE = 20
MAX_SHOWN = 200
FETCH_BATCH = 50
_local = threading.local()


@cache
def _language(suffix: str) -> tree_sitter.Language:
    module, fn = GRAMMARS[suffix]
    return tree_sitter.Language(getattr(importlib.import_module(module), fn)())


def suffix_of(path: str) -> str:
    dot = path.rfind(".")
    return path[dot:].lower() if dot > path.rfind("/") else ""


def parse(path: str, text: str) -> tree_sitter.Tree | None:
    """The tree-sitter tree of `text` by the grammar for `path`'s suffix; None without a grammar."""
    suffix = suffix_of(path)
    if suffix not in GRAMMARS:
        return None
    parsers = _local.__dict__.setdefault("parsers", {})  # Parser objects are not thread-safe
    if suffix not in parsers:
        parsers[suffix] = tree_sitter.Parser(_language(suffix))
    return parsers[suffix].parse(text.encode("utf-8"))


def _error_nodes(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            yield n
        elif n.has_error:
            stack.extend(reversed(n.children))


def syntax_errors(path: str, text: str) -> list[dict[str, Any]]:
    """Syntax errors tree-sitter finds (ERROR and MISSING nodes); [] without a grammar."""
    tree = parse(path, text)
    if tree is None or not tree.root_node.has_error:
        return []
    lines = text.split("\n")
    out = []
    for n in _error_nodes(tree.root_node):
        row, col = n.start_point.row, n.start_point.column
        if n.is_missing:
            message = f"syntax error: missing {n.type!r}"
        else:
            near = (n.text or b"").decode("utf-8", "replace").strip().split("\n")[0][:40]
            message = f"syntax error near {near!r}" if near else "syntax error"
        source = lines[row].strip() if row < len(lines) else ""
        out.append({"file": path, "line": row + 1, "column": col + 1, "code": "E999",
                    "message": message, "source": source})
        if len(out) >= MAX_ERRORS_PER_FILE:
            break
    return out


def fetch_texts(session: ToolSession, paths: list[str]) -> Iterator[tuple[str, str]]:
    """(path, text) of the text files among `paths`, fetched in batches the server can answer."""
    todo = list(paths)
    while todo:
        raw = session.call("read_raw", paths=todo[:FETCH_BATCH])
        yield from raw["files"].items()
        todo = raw["deferred"] + todo[FETCH_BATCH:]


def format_diagnostics(diags: list[dict[str, Any]]) -> str:
    shown = [f"{d['file']}:{d['line']}:{d['column']}: {d['code']} {d['message']}" for d in diags[:MAX_SHOWN]]
    more = f"\n[{len(diags) - MAX_SHOWN} more diagnostics not shown; lint a smaller path]" if len(
        diags) > MAX_SHOWN else ""
    return "\n".join(shown) + more


class LintArgs(ToolArgs):
    path: str | None = Field(None, description="File or directory to check, relative to the workspace "
                             "(default: the whole workspace; at most 500 files are checked).")


def run(session: ToolSession, args: LintArgs) -> ToolResult:
    """Check files for syntax errors (Python, JavaScript, TypeScript, Go, Rust) and, in Python, for
    undefined names. Reports file:line:column: code message for each problem.

    Args:
        session: the tool session of the sandbox.
        args: the file or directory to check.

    Returns:
        Diagnostics as text, and as a list of {file, line, column, code, message} in data.
    """
    res = session.call("lint", path=args.path, other_suffixes=NON_PYTHON)
    diags: list[dict[str, Any]] = list(res["diagnostics"])
    for path, text in fetch_texts(session, res["other"]):
        diags += [{k: v for k, v in d.items() if k != "source"} for d in syntax_errors(path, text)]
    diags.sort(key=lambda d: (d["file"], d["line"], d["column"]))
    checked = res["files_checked"]
    note = " (stopped at 500 files; lint a subdirectory for the rest)" if res["more_files"] else ""
    if not diags:
        output = f"No problems found in {checked} file(s){note}."
    else:
        output = f"{len(diags)} problem(s) in {checked} file(s) checked{note}:\n" + format_diagnostics(diags)
    return ToolResult(output=output, data={"diagnostics": diags, "files_checked": checked})


NAME = "lint"
DESCRIPTION = summary(run)
SPEC = ToolSpec(NAME, DESCRIPTION, LintArgs, run)
