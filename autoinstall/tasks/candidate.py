"""A candidate bug before it is run: its patches and what made it. Kept ones become `envs.task.Task`s."""
from __future__ import annotations

import difflib
import hashlib

from pydantic import BaseModel, Field

from envs.task import HistoryInfo, MutationInfo, TaskPart, TaskSource

NO_NEWLINE = "\\ No newline at end of file\n"


class Candidate(BaseModel):
    """One bug to try: `bug_patch` turns the environment's tree into the bug state, `gold_patch` undoes it."""

    kind: TaskSource
    bug_patch: str
    gold_patch: str
    files: list[str] = Field(default_factory=list)
    fix_lines: int = 0
    mutation: MutationInfo | None = None
    history: HistoryInfo | None = None
    test_files: list[str] = Field(default_factory=list)
    """History: the test files the commit touched (their tests are searched even when the coverage map
    shows no call into the changed files, e.g. a change to module-level tables)."""
    parts: list[TaskPart] = Field(default_factory=list)
    """Combined: the validated bugs it applies together."""

    @property
    def part_heads(self) -> list[str]:
        """The first failing test of each part (a combined task's statements describe every part)."""
        return [p.FAIL_TO_PASS[0] for p in self.parts if p.FAIL_TO_PASS]

    @property
    def hunk_key(self) -> str:
        """The changed lines only (no context, no line numbers): two candidates with the same key make the
        same edit, whatever their offsets."""
        changed = [line for line in self.bug_patch.splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        return hashlib.sha256("\n".join(changed).encode()).hexdigest()[:16]

    @property
    def short_id(self) -> str:
        return hashlib.sha256(self.bug_patch.encode()).hexdigest()[:8]


def unified_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """A `git apply`-able (-p1) diff of one file; marks a last line without a newline as git does."""
    out: list[str] = []
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{path}", tofile=f"b/{path}", n=context)
    for line in lines:
        out.append(line)
        if not line.endswith("\n"):
            out[-1] = line + "\n" + NO_NEWLINE
    return "".join(out)


def changed_lines(patch: str) -> int:
    """Lines a patch removes or adds (the size of the fix)."""
    return sum(1 for line in patch.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---")))


def mutation_candidate(info: MutationInfo, old: str, new: str) -> Candidate:
    """The candidate for one rewritten file: bug = old -> new, gold = new -> old."""
    bug = unified_diff(info.file, old, new)
    return Candidate(kind="mutation", bug_patch=bug, gold_patch=unified_diff(info.file, new, old),
                     files=[info.file], fix_lines=changed_lines(bug), mutation=info)


def history_candidate(info: HistoryInfo, bug_patch: str, gold_patch: str, files: list[str],
                      test_files: list[str] | None = None) -> Candidate:
    return Candidate(kind="history", bug_patch=bug_patch, gold_patch=gold_patch, files=files,
                     fix_lines=changed_lines(bug_patch), history=info, test_files=list(test_files or []))
