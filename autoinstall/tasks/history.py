"""Bugs from the repository's own history: the source part of a past commit, reversed on the environment's
tree, with today's tests kept.

Runs git inside the environment's container (the image keeps /workspace/.git, cloned with full history);
a repository without history gives no candidates, and mutations are the only kind.

Each commit's code files are reversed by a three-way merge (`git merge-file`: today's file, the file after
the commit, the file before it), so a later edit elsewhere in the file does not stop the reverse. A hunk
that conflicts with a later edit is left as it is today (a partial reverse); the commit's added or
deleted files are left alone. Commits that touched tests as well come first (a fix and its test), then
those that keep every Go/Rust definition (deleting one fails the package's build, not 1..K tests), whole
reverses before partial ones; reverses that change only comments or blank lines are skipped.
"""
from __future__ import annotations

import shlex

from pydantic import BaseModel, Field

from autoinstall.tasks.candidate import Candidate, changed_lines, history_candidate
from autoinstall.tasks.history_log import CommitChange, commits, is_cosmetic, removes_definition
from envs.base import Sandbox
from envs.task import HistoryInfo

MAX_COMMITS = 1000
MAX_LINES = 120
"""A reverse changing more lines is no candidate: the cap on a history task's size (not its files)."""
MAX_CANDIDATES = 60
"""Reverses stop once this many candidates are found (tests-touching commits are reversed first)."""
BATCH = 50
WORK = "/var/tmp/autoinstall-history"
"""Prefix of the scratch folder the merges use (one per call, removed after)."""
_SEP, _END = "\x1f", "\x1e"
_REVERSE = f"""W=$(mktemp -d {WORK}.XXXXXX) || exit 1
r() {{
  if [ ! -f "$2" ] || ! git cat-file -e "$1:$2" 2>/dev/null || ! git cat-file -e "$1~1:$2" 2>/dev/null; then
    printf '%s\\037%s\\037skip\\037\\037\\036' "$1" "$2"; return; fi
  git cat-file blob "$1:$2" > $W/base; git cat-file blob "$1~1:$2" > $W/other
  git merge-file -q -p "$2" $W/base $W/other > $W/out 2>/dev/null; rc=$?
  if [ $rc -ne 0 ]; then git merge-file -q -p --ours "$2" $W/base $W/other > $W/out 2>/dev/null; fi
  printf '%s\\037%s\\037%s\\037' "$1" "$2" "$rc"
  git diff --no-index --no-color --no-ext-diff -- "$2" $W/out; printf '\\037'
  git diff --no-index --no-color --no-ext-diff -- $W/out "$2"; printf '\\036'
}}
"""


class HistoryFunnel(BaseModel):
    """How many commits reached each stage of history task making (make.py fills the last three)."""

    looked_at: int = 0
    """Non-merge commits read from the log."""
    code: int = 0
    """Modify 1..MAX_FILES source files."""
    with_tests: int = 0
    """Of those, also touch a test file."""
    reversed: int = 0
    """At least one code hunk reverses on today's tree (of those tried)."""
    whole: int = 0
    """Every code file reverses whole (the rest are partial reverses)."""
    candidates: int = 0
    """Reverses kept as candidates: not only comments, at most MAX_LINES lines."""
    searched: int = 0
    failing: int = 0
    """Searched and kept: 1..K tests fail with the code reversed, the rest pass."""
    validated: int = 0
    tried: int = 0
    """Commits whose reverse was attempted (reverses stop at MAX_CANDIDATES)."""


class Reverse(BaseModel):
    """One commit's code reversed on today's tree: bug and gold patches, and whether it is whole."""

    change: CommitChange
    bug: str = ""
    gold: str = ""
    files: list[str] = Field(default_factory=list)
    whole: bool = True


def has_history(sandbox: Sandbox) -> bool:
    return sandbox.exec("git rev-parse --verify -q HEAD~1", timeout=60).ok


def history_candidates(sandbox: Sandbox, limit: int = MAX_COMMITS, max_lines: int = MAX_LINES,
                       funnel: HistoryFunnel | None = None,
                       max_candidates: int = MAX_CANDIDATES) -> list[Candidate]:
    """Candidates whose bug is a commit's code change reversed, best first (see the module's docstring),
    then newest first. Patches are re-made by `git diff` when kept (validate.search)."""
    funnel = funnel if funnel is not None else HistoryFunnel()
    if not has_history(sandbox):
        return []
    funnel.looked_at, listed = commits(sandbox, limit)
    funnel.code, funnel.with_tests = len(listed), sum(1 for c in listed if c.tests)
    ordered = [c for c in listed if c.tests] + [c for c in listed if not c.tests]
    kept: list[Reverse] = []
    for start in range(0, len(ordered), BATCH):
        if len(kept) >= max_candidates:
            break
        batch = ordered[start:start + BATCH]
        funnel.tried += len(batch)
        for rev in reverse_all(sandbox, batch):
            funnel.reversed += 1
            funnel.whole += rev.whole
            if is_cosmetic(rev.bug) or changed_lines(rev.bug) > max_lines:
                continue
            kept.append(rev)
    kept.sort(key=lambda r: (not r.change.tests, removes_definition(r.bug), not r.whole))
    funnel.candidates = len(kept)
    return [history_candidate(HistoryInfo(commit=r.change.sha, message=r.change.message), r.bug, r.gold,
                              r.files, r.change.tests) for r in kept]


def reverse_all(sandbox: Sandbox, changes: list[CommitChange]) -> list[Reverse]:
    """Each commit's code files reversed by a three-way merge on today's tree; commits with nothing left to
    reverse are left out. Order kept."""
    lines = [_REVERSE]
    for change in changes:
        lines.extend(f"r {shlex.quote(change.sha)} {shlex.quote(path)}" for path in change.modified)
    lines.append('rm -rf "$W"')
    result = sandbox.exec("\n".join(lines), timeout=900, output_cap=64 * 1024 * 1024)
    by_sha = {c.sha: Reverse(change=c) for c in changes}
    for record in result.stdout.split(_END):
        parts = record.split(_SEP)
        if len(parts) != 5 or parts[0].strip() not in by_sha:
            continue
        rev, path, status = by_sha[parts[0].strip()], parts[1], parts[2]
        bug, gold = _relabel(parts[3], path), _relabel(parts[4], path)
        if status != "0":
            rev.whole = False
        if bug and gold:
            rev.bug, rev.gold = rev.bug + bug, rev.gold + gold
            rev.files.append(path)
        elif status == "0":  # nothing of this file reverses (a later commit undid it)
            rev.whole = False
    return [by_sha[c.sha] for c in changes if by_sha[c.sha].bug]


def _relabel(diff: str, path: str) -> str:
    """A `git diff --no-index` of `path` against a temporary file, as a -p1 patch of `path` alone."""
    start = diff.find("\n@@")
    if start < 0:
        return ""
    body = diff[start + 1:]
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n" + \
        (body if body.endswith("\n") else body + "\n")
