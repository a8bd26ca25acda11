"""Rust's doc tests, placed by their documentation block: rustdoc runs every Rust code block of a doc comment as
a test named `FILE - ITEM (line N)` (`src/lib.rs - add (line 5)`, `src/lib.rs - (line 3)` for a module's own
docs), N the line of the block's opening fence. So a doc test is the block at that line, and it belongs to the
item its doc comment documents: the code index makes each block a test function (codeindex.py) whose names
are the block's code and that item's name, so it runs for a change the item's code or its own code reaches.

Text only (the code index parses the blocks' code): `///` and `//!` comments; block comments (`/** */`) and
`#[doc = ...]` attributes (a README included as the crate's docs) are not read, and their doc tests are
placed nowhere (they run for every change).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_DOC_ID = re.compile(r"^[^:\s]+-doc::(?P<file>\S+) - (?:.*? )?\(line (?P<line>\d+)\)(?: - .*)?$")
"""A doc test's id (`<crate>-doc::<name>`, envs/testrun/cargo_runner.py); a `compile_fail` or `no_run` block's
name ends in ` - compile fail` / ` - compile`."""
_DOC_LINE = re.compile(r"^\s*(?P<marker>///|//!)(?!/)(?P<content>.*)$")
_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})\s*(?P<lang>.*)$")
_RUST_TAGS = frozenset({"rust", "ignore", "should_panic", "no_run", "compile_fail", "test_harness", "allow_fail",
                        "standalone_crate"})
_ITEM = re.compile(r"\b(?:fn|struct|enum|trait|type|union|mod|static|macro_rules!)\s+(?:r#)?(?P<name>[A-Za-z_]\w*)"
                   r"|\bconst\s+(?!fn\b|unsafe\b|async\b|extern\b)(?P<const>[A-Za-z_]\w*)")
_NOT_ITEM = re.compile(r"^\s*(?:$|#\[|#!\[|//)")
"""Lines between a doc comment and its item: blank, attributes, other comments."""


@dataclass(frozen=True)
class DocBlock:
    """One Rust code block of a doc comment: what rustdoc runs as one doc test."""

    line: int
    """The opening fence's line (1-based): the N of the test's name."""
    end: int
    """The closing fence's line (the comment's last line when it has none)."""
    code: str
    """The block's lines, hidden ones (`# `) included, the fence first."""
    item: str
    """The documented item's name (`add`, `Version`); "" for a module's own docs (`//!`) or an item not
    named by a keyword (an impl block, a field)."""


def place(test_id: str) -> tuple[str, int] | None:
    """(file, line) of a doc test's block from its id; None for any other id."""
    match = _DOC_ID.match(test_id)
    return (match["file"], int(match["line"])) if match else None


def doc_blocks(text: str) -> list[DocBlock]:
    """Every Rust code block of the file's `///` and `//!` comments."""
    lines = text.splitlines()
    blocks: list[DocBlock] = []
    n = 0
    while n < len(lines):
        comment = _doc_comment(lines, n)
        if not comment:
            n += 1
            continue
        marker, contents = comment
        item = "" if marker == "//!" else _item_after(lines, n + len(contents))
        blocks.extend(_blocks(contents, n + 1, item))
        n += len(contents)
    return blocks


def _doc_comment(lines: list[str], start: int) -> tuple[str, list[str]] | None:
    """(marker, the contents of each line) of the doc comment starting at `start`, else None."""
    first = _DOC_LINE.match(lines[start])
    if first is None:
        return None
    contents = []
    for line in lines[start:]:
        match = _DOC_LINE.match(line)
        if match is None or match["marker"] != first["marker"]:
            break
        contents.append(match["content"])
    return first["marker"], contents


def _blocks(contents: list[str], first_line: int, item: str) -> list[DocBlock]:
    """The Rust code blocks of one doc comment whose first line is `first_line`."""
    out = []
    n = 0
    while n < len(contents):
        opening = _FENCE.match(contents[n])
        if opening is None:
            n += 1
            continue
        fence = opening["fence"]
        end = next((k for k in range(n + 1, len(contents))
                    if contents[k].strip().startswith(fence[0] * len(fence))
                    and not contents[k].strip().strip(fence[0])), len(contents) - 1)
        if _is_rust(opening["lang"]):
            code = "\n".join(_unhidden(c) for c in contents[n:end])
            out.append(DocBlock(line=first_line + n, end=first_line + end, code=code, item=item))
        n = end + 1
    return out


def _is_rust(lang: str) -> bool:
    """rustdoc's rule, nearly: no language, or a Rust attribute among the tags, or none but them."""
    tags = [t for t in re.split(r"[\s,{}]+", lang.strip()) if t and not t.startswith(".")]
    rusty = [t for t in tags if t in _RUST_TAGS or t.startswith(("edition", "ignore-"))]
    return not tags or "rust" in tags or len(rusty) == len(tags)


def _unhidden(line: str) -> str:
    """A code line as the compiler sees it: one leading space dropped, `# ` (a hidden line) dropped."""
    line = line[1:] if line.startswith(" ") else line
    return line[2:] if line.startswith("# ") else "" if line == "#" else line


def _item_after(lines: list[str], start: int) -> str:
    """The name of the item a `///` comment ending before `start` documents, else ""."""
    for line in lines[start:]:
        if _NOT_ITEM.match(line):
            continue
        match = _ITEM.search(line)
        return (match["name"] or match["const"]) if match else ""
    return ""
