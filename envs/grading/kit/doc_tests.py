"""Tests written in a product file's documentation: rustdoc's code blocks in doc comments (`///`, `//!`,
`/** */`), and Python's doctest examples (`>>>`) in docstrings. They are the task's tests though they sit in
files the agent may change, so an agent could earn the reward by editing an example's expected value
(`assert_eq!(add(2, 3), 5)` made `4`, `>>> add(2, 3)` / `5` made `4`) instead of fixing the code. The grader
keeps the start's version of every documentation that holds one, with the agent's code around it:

- Rust: each doc comment that holds a Rust code block in the start is paired with the agent's comment on the
  same item (its name and rank among that item's comments; a module's own docs by rank) and replaced by the
  start's when they differ. rustdoc names a doc test by its block's line (`src/lib.rs - add (line 5)`), which
  the agent's code above it may move: `moved_blocks` maps the graded file's lines back to the start's.
- Python: each docstring (module, class, function, by qualified name) whose start text holds `>>>` replaces the
  agent's docstrings of every scope of that name when they differ. pytest names a doctest by its object, not
  its line. What text cannot see (the name bound to another function, a docstring set at run time) the run's
  guard checks: a doctest of the agent's file runs the start's examples (envs/testrun/guard_plugin.py).

A documentation the agent deleted leaves its tests missing from the run (graded as not passing). Stdlib only.
"""
from __future__ import annotations

import ast
import re

from . import rust_docs


def keep_rust_docs(start: str, agent: str) -> tuple[str, bool]:
    """(the agent's text with the start's doc-test comments restored, whether any was restored)."""
    theirs = {c.key: c for c in rust_docs.doc_comments(agent)}
    lines = agent.splitlines(keepends=True)
    start_lines = start.splitlines(keepends=True)
    edits = []
    for ours in rust_docs.doc_comments(start):
        other = theirs.get(ours.key)
        if not ours.blocks or other is None:
            continue
        kept = start_lines[ours.first:ours.last + 1]
        if kept and not kept[-1].endswith("\n"):
            kept[-1] += "\n"
        if lines[other.first:other.last + 1] != kept:
            edits.append((other.first, other.last, kept))
    for first, last, kept in sorted(edits, key=lambda e: -e[0]):  # bottom-up: earlier indexes stay right
        lines[first:last + 1] = kept
    return "".join(lines), bool(edits)


def moved_blocks(start: str, graded: str) -> dict:
    """Line of each doc-test block in the graded text -> its line in the start's text (1-based), where they
    differ: the same comment (by key) and the same block within it."""
    theirs = {c.key: c for c in rust_docs.doc_comments(graded)}
    moved = {}
    for ours in rust_docs.doc_comments(start):
        other = theirs.get(ours.key)
        if other is None:
            continue
        for was, now in zip(ours.blocks, other.blocks):
            if was.line != now.line:
                moved[now.line] = was.line
    return moved


_RUST_DOC_ID = re.compile(r"^(?P<head>[^:\s]+-doc::(?P<file>\S+) - (?:.*? )?\(line )(?P<line>\d+)(?P<tail>\).*)$", re.S)


def start_id(test_id: str, moved: dict) -> str:
    """A doc test's id from the graded run as the start named it: its line mapped back through `moved` (workdir
    path of a .rs file -> moved_blocks of it), for the one file whose path ends with the id's (rustdoc names
    files from the package's root, which may be a workspace member's folder). Any other id as it is."""
    match = _RUST_DOC_ID.match(test_id)
    if not match or not moved:
        return test_id
    file = match["file"]
    maps = [lines for rel, lines in moved.items() if rel == file or rel.endswith("/" + file)]
    if len(maps) != 1 or int(match["line"]) not in maps[0]:
        return test_id
    return f"{match['head']}{maps[0][int(match['line'])]}{match['tail']}"


def keep_python_doctests(start: str, agent: str) -> tuple[str, bool]:
    """(the agent's text with the start's docstrings that hold `>>>` restored, whether any was restored); the
    agent's text unchanged when either does not parse (the run then fails on it, or the start has none)."""
    ours_b, theirs_b = start.encode("utf-8", "surrogateescape"), agent.encode("utf-8", "surrogateescape")
    try:  # ast's columns count UTF-8 bytes: every slice below is of the encoded text
        ours, theirs = _docstrings(ast.parse(ours_b)), _docstrings(ast.parse(theirs_b))
    except (SyntaxError, ValueError):
        return agent, False
    at_ours, at_theirs = _line_offsets(ours_b), _line_offsets(theirs_b)
    edits = []
    for name, nodes in ours.items():
        node = nodes[0]
        if ">>>" not in node.value.value:
            continue
        kept = ours_b[at_ours[node.lineno] + node.col_offset:at_ours[node.end_lineno] + node.end_col_offset]
        for other in theirs.get(name, ()):  # every scope of that name: a second `def` would replace the first
            a = at_theirs[other.lineno] + other.col_offset
            b = at_theirs[other.end_lineno] + other.end_col_offset
            if theirs_b[a:b] != kept:
                edits.append((a, b, kept))
    for a, b, kept in sorted(edits, key=lambda e: -e[0]):
        theirs_b = theirs_b[:a] + kept + theirs_b[b:]
    return theirs_b.decode("utf-8", "surrogateescape"), bool(edits)


def _docstrings(tree: ast.Module) -> dict:
    """Qualified name ("" for the module) -> the docstring expression nodes of the scopes of that name, in order."""
    found = {}

    def visit(node: ast.AST, name: str) -> None:
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            found.setdefault(name, []).append(body[0])
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{name}.{child.name}" if name else child.name)

    visit(tree, "")
    return found


def _line_offsets(data: bytes) -> list:
    """Offset of each line's start in `data` (index 0 unused: ast's lines are 1-based)."""
    offsets, at = [0, 0], 0
    for line in data.splitlines(keepends=True):
        at += len(line)
        offsets.append(at)
    return offsets
