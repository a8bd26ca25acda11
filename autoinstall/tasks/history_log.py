"""Reading the history for history tasks: which past commits changed code (and tests), from `git log`."""
from __future__ import annotations

import re

from pydantic import BaseModel, Field

from autoinstall.tasks.languages import grammar_for, is_source_path, is_test_path
from envs.base import Sandbox

MAX_FILES = 12
"""Commits modifying more source files are not reversed (a bound on the work; history.MAX_LINES caps the size)."""
_SEP, _END = "\x1f", "\x1e"
_TESTY = re.compile(r"(^|[/_.-])(tests?|testing|specs?|conftest)([/_.-]|$)")
_COMMENT = ("#", "//", "/*", "*", '"""', "'''")
_COMPILED = (".go", ".rs")
_DEFINITION = re.compile(r"^([+-])(?:pub(?:\([\w:]+\))?\s+)?(?:func|fn|type|struct|enum|trait|const|static)\s+"
                         r"(?:\([^)]*\)\s*)?(\w+)")


class CommitChange(BaseModel):
    """One commit: its message, the source files it modified, and the test files it touched."""

    sha: str
    message: str = ""
    modified: list[str] = Field(default_factory=list)
    tests: list[str] = Field(default_factory=list)


def touches_test(path: str) -> bool:
    """A test file in a language the generator knows (tests/, test_*.py, *_test.go, ...)."""
    return grammar_for(path) is not None and is_test_path(path) and bool(_TESTY.search(path.lower()))


def parse_log(text: str, max_files: int = MAX_FILES) -> tuple[int, list[CommitChange]]:
    """(commits read, the commits that modify 1..max_files source files) from `git log --name-status`
    with the record format `%x1e%H%x1f%B%x1f`. Added, deleted and renamed source files do not count as
    modified (they are never reversed) and do not disqualify the commit."""
    read, found = 0, []
    for record in text.split(_END):
        parts = record.split(_SEP)
        if len(parts) != 3:
            continue
        read += 1
        sha, message, names = parts[0].strip(), parts[1].strip(), parts[2]
        modified, tests = [], []
        for line in names.strip().splitlines():
            status, _, rest = line.partition("\t")
            path = rest.split("\t")[-1]
            if touches_test(path):
                tests.append(path)
            elif status == "M" and is_source_path(path):
                modified.append(path)
        if modified and len(modified) <= max_files:
            found.append(CommitChange(sha=sha, message=message, modified=modified, tests=tests))
    return read, found


def commits(sandbox: Sandbox, limit: int) -> tuple[int, list[CommitChange]]:
    """(commits read, those that modify 1..MAX_FILES source files): the last `limit` non-merge commits of
    HEAD, newest first."""
    fmt = "%x1e%H%x1f%B%x1f"
    result = sandbox.exec(f"git log --no-merges --no-renames --name-status --format='{fmt}' -n {int(limit)} "
                          "HEAD", timeout=300, output_cap=32 * 1024 * 1024)
    if not result.ok:
        return 0, []
    return parse_log(result.stdout)


def is_cosmetic(patch: str) -> bool:
    """Every changed line is blank or a comment: no test can tell it apart."""
    changed = [line[1:].strip() for line in patch.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    return all(not text or text.startswith(_COMMENT) for text in changed)


def removes_definition(patch: str) -> bool:
    """A Go or Rust reverse that deletes a top-level definition without adding it back: the tests that use
    it no longer compile, so the whole package fails rather than 1..K tests."""
    removed, added, compiled = set(), set(), False
    for line in patch.splitlines():
        if line.startswith("+++ "):
            compiled = line.endswith(_COMPILED)
        elif compiled and (match := _DEFINITION.match(line)):
            (removed if match.group(1) == "-" else added).add(match.group(2))
    return bool(removed - added)
