"""Bugs from the repository's own history: the source part of a past commit, reversed on the environment's
commit (when it still applies), with today's tests kept.

Runs git inside the environment's container (the image keeps /workspace/.git); a repository without
history gives no candidates, and mutations are the only kind.
"""
from __future__ import annotations

import shlex

from autoinstall.tasks.candidate import Candidate, changed_lines, history_candidate
from autoinstall.tasks.languages import is_source_path
from envs.base import Sandbox
from envs.task import HistoryInfo

MAX_COMMITS = 300
MAX_FILES = 3
MAX_LINES = 60
_SEP, _END = "\x1f", "\x1e"


class CommitChange:
    """One commit: its message and the source files it modified."""

    def __init__(self, sha: str, message: str, modified: list[str], other: list[str]) -> None:
        self.sha, self.message, self.modified, self.other = sha, message, modified, other


def has_history(sandbox: Sandbox) -> bool:
    return sandbox.exec("git rev-parse --verify -q HEAD~1", timeout=60).ok


def commits(sandbox: Sandbox, limit: int = MAX_COMMITS) -> list[CommitChange]:
    """The last `limit` non-merge commits that modify 1..MAX_FILES source files (and add or delete none)."""
    fmt = "%x1e%H%x1f%B%x1f"
    result = sandbox.exec(f"git log --no-merges --name-status --format='{fmt}' -n {int(limit)} HEAD",
                          timeout=300, output_cap=16 * 1024 * 1024)
    if not result.ok:
        return []
    found = []
    for record in result.stdout.split(_END):
        parts = record.split(_SEP)
        if len(parts) != 3:
            continue
        sha, message, names = parts[0].strip(), parts[1].strip(), parts[2]
        modified, other = [], []
        for line in names.strip().splitlines():
            status, _, path = line.partition("\t")
            if not is_source_path(path.split("\t")[-1]):
                continue
            (modified if status == "M" else other).append(path)
        if modified and not other and len(modified) <= MAX_FILES:
            found.append(CommitChange(sha, message, modified, other))
    return found


def history_candidates(sandbox: Sandbox, limit: int = MAX_COMMITS,
                       max_lines: int = MAX_LINES) -> list[Candidate]:
    """Candidates whose bug is a commit's source change reversed, in the order of the log (newest first).

    Each reverse is checked with `git apply --check` on the environment's tree; one that does not apply, or
    changes more than `max_lines` lines, is skipped. Patches are re-made by `git diff` on the environment's
    tree when the candidate is kept (see search.py), so their line numbers are today's.
    """
    if not has_history(sandbox):
        return []
    changes = {c.sha: c for c in commits(sandbox, limit)}
    if not changes:
        return []
    lines = []
    for change in changes.values():
        sha, paths = shlex.quote(change.sha), " ".join(shlex.quote(p) for p in change.modified)
        lines.append(f"d=$(git diff --no-color --no-ext-diff {sha} {sha}~1 -- {paths}); "
                     f"printf '%s\\037' {sha}; printf '%s\\n' \"$d\" | git apply --check - 2>/dev/null; "
                     f"printf '%s\\037%s\\036' $? \"$d\"")
    result = sandbox.exec("\n".join(lines), timeout=600, output_cap=64 * 1024 * 1024)
    out = []
    for record in result.stdout.split(_END):
        parts = record.split(_SEP, 2)
        if len(parts) != 3 or parts[0].strip() not in changes:
            continue
        sha, status, bug = parts[0].strip(), parts[1], parts[2] + "\n"
        if status != "0" or not bug.strip() or changed_lines(bug) > max_lines:
            continue
        change = changes[sha]
        info = HistoryInfo(commit=sha, message=change.message)
        out.append(history_candidate(info, bug, "", change.modified))
    return out
