"""Rust's doc tests, placed by their documentation block: rustdoc runs every Rust code block of a doc comment as
a test named `FILE - ITEM (line N)` (`src/lib.rs - add (line 5)`, `src/lib.rs - (line 3)` for a module's own
docs), N the line of the block's opening fence. So a doc test is the block at that line, and it belongs to the
item its doc comment documents: the code index makes each block a test function (codeindex.py) whose names
are the block's code and that item's name, so it runs for a change the item's code or its own code reaches.

The blocks are read by envs/grading/kit/rust_docs.py (the grader keeps them as the task's: doc_tests.py). Text
only (the code index parses the blocks' code): `#[doc = ...]` attributes (a README included as the crate's
docs) are not read, and their doc tests are placed nowhere (they run for every change).
"""
from __future__ import annotations

import re

from envs.grading.kit.rust_docs import DocBlock, doc_blocks

__all__ = ["DocBlock", "doc_blocks", "place"]

_DOC_ID = re.compile(r"^[^:\s]+-doc::(?P<file>\S+) - (?:.*? )?\(line (?P<line>\d+)\)(?: - .*)?$")
"""A doc test's id (`<crate>-doc::<name>`, envs/testrun/cargo_runner.py); a `compile_fail` or `no_run` block's
name ends in ` - compile fail` / ` - compile`."""


def place(test_id: str) -> tuple[str, int] | None:
    """(file, line) of a doc test's block from its id; None for any other id."""
    match = _DOC_ID.match(test_id)
    return (match["file"], int(match["line"])) if match else None
