"""rustdoc's doc tests in a Rust source file's text: every Rust code block of a doc comment (`///`, `//!`,
`/** */`, `/*! */`) is a test named `FILE - ITEM (line N)`, N the line of the block's opening fence. Text
only: `#[doc = ...]` attributes (a README included as the crate's docs) are not read. Stdlib only (the grader
runs it in the task image; the task maker's code index reads the same blocks: autoinstall/tasks/doctests.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_DOC_LINE = re.compile(r"^\s*(?P<marker>///|//!)(?!/)(?P<content>.*)$")
_BLOCK_OPEN = re.compile(r"^\s*/\*(?P<marker>[*!])(?![*/])(?P<content>.*)$")
_GUTTER = re.compile(r"^\s*\*(?!/)")
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



@dataclass
class DocComment:
    """One run of `///` (or `//!`) lines, or one `/** */` (`/*! */`) comment: the documentation of one item (or
    of its module)."""

    key: tuple
    """(marker, the documented item's name, its rank among that item's comments): what pairs a comment of
    one version of a file with the same comment of another."""
    first: int
    last: int
    """Its first and last line, 0-based."""
    blocks: list = field(default_factory=list)
    """Its Rust code blocks (DocBlock), in order."""


def doc_comments(text: str) -> list:
    """Every doc comment of the file, in order."""
    lines = text.splitlines()
    found: list = []
    seen: dict = {}
    n = 0
    while n < len(lines):
        comment = _doc_comment(lines, n)
        if not comment:
            n += 1
            continue
        marker, contents = comment
        item = "" if marker in ("//!", "/*!") else _item_after(lines, n + len(contents))
        rank = seen[(marker, item)] = seen.get((marker, item), -1) + 1
        found.append(DocComment((marker, item, rank), n, n + len(contents) - 1, _blocks(contents, n + 1, item)))
        n += len(contents)
    return found


def doc_blocks(text: str) -> list[DocBlock]:
    """Every Rust code block of the file's `///` and `//!` comments."""
    return [block for comment in doc_comments(text) for block in comment.blocks]


def _doc_comment(lines: list[str], start: int) -> tuple[str, list[str]] | None:
    """(marker, the contents of each line) of the doc comment starting at `start`, else None."""
    first = _DOC_LINE.match(lines[start])
    if first is None:
        return _block_comment(lines, start)
    contents = []
    for line in lines[start:]:
        match = _DOC_LINE.match(line)
        if match is None or match["marker"] != first["marker"]:
            break
        contents.append(match["content"])
    return first["marker"], contents


def _block_comment(lines: list[str], start: int) -> tuple[str, list[str]] | None:
    """(marker, the contents of each line) of a `/** */` or `/*! */` doc comment starting at `start` (a line's
    leading `*` gutter dropped), else None."""
    opening = _BLOCK_OPEN.match(lines[start])
    if opening is None:
        return None
    contents = []
    for k in range(start, len(lines)):
        text = opening["content"] if k == start else _GUTTER.sub("", lines[k])
        end = text.find("*/")
        contents.append(text if end < 0 else text[:end])
        if end >= 0:
            break
    return "/*" + opening["marker"], contents


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
