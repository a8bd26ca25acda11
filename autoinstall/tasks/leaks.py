"""The leak check of a problem statement: it must not give the answer away.

Every style: no line of the gold patch (a changed line of it, stripped, as a substring of the statement; or a
line or `code span` of the statement that is a piece of one). Issue and terse: no test id either (a listed
test's whole id, or the name of a failing test's function as a word). The verdict is recorded on the task
(envs.task.StatementCheck).
"""
from __future__ import annotations

import functools
import re

from envs.task import StatementCheck, StatementStyle

MIN_SECRET = 4
"""Changed lines shorter than this (`}`, `end`) say nothing of the fix."""
MIN_PIECE = 10
"""A statement line or code span this long that is part of a changed line is a leak (when it is more than a
name: naming the API is what a user does)."""
TRIVIAL = frozenset({"else:", "else {", "} else {", "return", "return;", "pass", "break", "break;", "continue",
                     "continue;", "});", "try:", "finally:", "default:", "return nil", "return None",
                     "return true;", "return false;", "return True", "return False", "return nil, err",
                     "return err", "return false", "return true"})
"""Lines too common to tell anything (they occur in any code), never counted as the fix."""
_CODE = re.compile(r"`([^`\n]+)`")
_ID_PARTS = re.compile(r"::|#|/|\.|\[|\(| > | › ")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NAME = re.compile(r"^[A-Za-z_][\w.:]*$")
_GENERIC = frozenset({"test", "tests", "testing", "testcase", "testsuite"})


def _norm(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=64)
def secret_lines(gold_patch: str) -> list[str]:
    """The changed lines of the patch (both sides, whitespace collapsed) that would give the fix away."""
    out = set()
    for line in gold_patch.splitlines():
        if line[:1] in "+-" and not line.startswith(("+++", "---")):
            text = _norm(line[1:])
            if len(text) >= MIN_SECRET and any(c.isalnum() for c in text) and text not in TRIVIAL:
                out.add(text)
    return sorted(out)


def test_names(test_ids: list[str]) -> list[str]:
    """The names of the tests' functions in their ids (test_clamp_high, TestParse, testBar), as words a
    statement must not hold."""
    names = set()
    for test_id in test_ids:
        for part in _ID_PARTS.split(test_id):
            if _IDENT.match(part) and "test" in part.lower() and part.lower() not in _GENERIC and len(part) > 5:
                names.add(part)
    return sorted(names)


def find_leaks(text: str, gold_patch: str, test_ids: list[str] | None = None,
               failing: list[str] | None = None) -> list[str]:
    """What of the fix (and, given `test_ids`, of the tests) the statement shows; [] when nothing."""
    found = []
    flat = _norm(text)
    secrets = secret_lines(gold_patch)
    for secret in secrets:
        if secret in flat:
            found.append(f"gold line: {secret}")
    pieces = [_norm(line) for line in text.splitlines()] + [_norm(m) for m in _CODE.findall(text)]
    for piece in pieces:
        if len(piece) >= MIN_PIECE and not _NAME.match(piece) and any(piece in s for s in secrets) and \
                not any(piece in f for f in found):
            found.append(f"piece of a gold line: {piece}")
    for test_id in test_ids or []:
        if test_id and test_id in text:
            found.append(f"test id: {test_id}")
    for name in test_names(failing or []) if test_ids is not None else []:
        if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) and not any(name in f for f in found):
            found.append(f"test name: {name}")
    return found


def check(style: StatementStyle, text: str, gold_patch: str, test_ids: list[str], failing: list[str], *,
          writer: str = "embedded", note: str = "") -> StatementCheck:
    """The verdict on one statement: the tests style may name tests, the others may not."""
    ids = None if style == "tests" else test_ids
    leaks = find_leaks(text, gold_patch, ids, failing) if text.strip() else ["empty statement"]
    return StatementCheck(style=style, passed=not leaks, leaks=leaks[:10], writer=writer, note=note)
