"""Combined tasks: 2-4 validated bugs applied together and searched as one.

The parts come from the bugs validated so far in the run (mutations and history reverses): each changes
other functions than the rest (and, where the validated bugs allow, other files), and no two make the same
test fail, so each part's fix alone leaves the others' tests failing. The search applies them all: the
tests that fail must be exactly the union of the parts' failing tests and every other test must pass;
then each part's fix alone, with the rest still applied, must leave some of them failing (run for real,
on the union only, for three parts or more: with two, one part's fix alone leaves the other part's own bug
state, byte for byte, whose tests its validation saw fail twice). A kept group is validated like any
candidate, as one task.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from autoinstall.tasks.candidate import Candidate, changed_lines
from autoinstall.tasks.validate import Verdict, judge
from autoinstall.tasks.workspace import FAILED, Suite, apply_patch, git_diffs, outcomes
from envs.base import Sandbox
from envs.task import TaskPart

MAX_PARTS = 4
MAX_USES = 2
"""A validated bug joins at most this many combined tasks."""
SIZES = (2, 3, 2, 4)
"""Group sizes, in turn."""


@dataclass
class Kept:
    """A validated bug that may join a combined task."""

    candidate: Candidate
    verdict: Verdict
    sites: frozenset[str]
    """The functions it changes (`file::name`), or its files when it changes none."""
    reaching: list[str] | None = None
    """The tests that reach it (coverage map), for the selection; None: unknown."""
    uses: int = 0

    @property
    def failing(self) -> frozenset[str]:
        return frozenset(self.verdict.fail_to_pass)


@dataclass
class Pool:
    """The validated bugs of a run and the groups already tried."""

    kept: list[Kept] = field(default_factory=list)
    tried: set[frozenset[int]] = field(default_factory=set)
    turn: int = 0

    def add(self, kept: Kept) -> None:
        if kept.candidate.kind != "combined":
            self.kept.append(kept)

    def next_group(self) -> list[Kept] | None:
        """The next untried group: the newest bug that may still join one, with the others that fit it,
        other files first; None when no group is left."""
        sizes = SIZES[self.turn % len(SIZES):] + SIZES[:self.turn % len(SIZES)]
        self.turn += 1
        for size in dict.fromkeys(sizes):
            for seed in reversed(self.kept):
                if seed.uses >= MAX_USES:
                    continue
                group = self._grow(seed, size)
                key = frozenset(id(k) for k in group)
                if len(group) == size and key not in self.tried:
                    self.tried.add(key)
                    for part in group:
                        part.uses += 1
                    return group
        return None

    def _grow(self, seed: Kept, size: int) -> list[Kept]:
        group = [seed]
        others = [k for k in self.kept if k is not seed and k.uses < MAX_USES]
        others.sort(key=lambda k: (bool(set(k.candidate.files) & set(seed.candidate.files)), k.uses,
                                   hashlib.sha256(k.candidate.bug_patch.encode()).hexdigest()))
        for other in others:
            if len(group) == size:
                break
            files = {f for k in group for f in k.candidate.files}
            if all(fits(other, k) for k in group) and (not set(other.candidate.files) & files or
                                                       not _can_spread(others, files, group)):
                group.append(other)
        return group


def _can_spread(others: list[Kept], files: set[str], group: list[Kept]) -> bool:
    """Another bug outside `files` still fits the group: take it before a second one in a used file."""
    return any(not set(o.candidate.files) & files and all(fits(o, k) for k in group) for o in others)


def fits(a: Kept, b: Kept) -> bool:
    """Other functions, and no test failing for both."""
    return not (a.sites & b.sites) and not (a.failing & b.failing)


def combined_candidate(parts: list[Kept]) -> Candidate:
    """The group as one candidate (its patches made exact by git diff once searched)."""
    bug = "".join(k.candidate.bug_patch for k in parts)
    gold = "".join(k.candidate.gold_patch for k in reversed(parts))
    files = sorted({f for k in parts for f in k.candidate.files})
    return Candidate(kind="combined", bug_patch=bug, gold_patch=gold, files=files, fix_lines=changed_lines(bug),
                     parts=[TaskPart(kind=k.candidate.kind, files=k.candidate.files,  # type: ignore[arg-type]
                                     FAIL_TO_PASS=k.verdict.fail_to_pass, gold_patch=k.candidate.gold_patch,
                                     mutation=k.candidate.mutation,
                                     history=k.candidate.history) for k in parts])


def selection(parts: list[Kept]) -> list[str] | None:
    """The tests that reach any part (None, the whole suite, when one part's are unknown)."""
    if any(k.reaching is None for k in parts):
        return None
    return sorted({t for k in parts for t in (k.reaching or [])} | {t for k in parts for t in k.failing})


def search_combined(sandbox: Sandbox, suite: Suite, parts: list[Kept], passing: list[str], *, timeout_s: float,
                    exact_patches: bool) -> tuple[Verdict, Candidate]:
    """Apply every part, run (the tests that reach them), check each part's fix alone, revert."""
    candidate = combined_candidate(parts)
    union = sorted({t for k in parts for t in k.failing})
    applied: list[Kept] = []
    for part in parts:
        if not apply_patch(sandbox, part.candidate.bug_patch):
            _revert(sandbox, applied, candidate.files)
            return Verdict(kept=False, reason="parts do not apply together"), candidate
        applied.append(part)
    try:
        select = selection(parts)
        run = suite.run(sandbox, timeout_s, max_fail=len(union) + 1, select=select)
        verdict = judge(run, select if select is not None else passing, len(union))
        if verdict.kept and verdict.fail_to_pass != union:
            verdict = Verdict(kept=False, reason="parts interact")
        if verdict.kept:
            verdict.judged = list(select if select is not None else passing)
            verdict.pass_to_pass = [t for t in passing if t not in set(union)]
            if len(parts) > 2 and (lone := _fixed_by_one(sandbox, suite, parts, union, timeout_s)):
                verdict = Verdict(kept=False, reason=f"one part's fix alone fixes all ({lone})")
        if verdict.kept and exact_patches:
            bug, gold = git_diffs(sandbox, candidate.files)
            if bug and gold:
                candidate = candidate.model_copy(update={"bug_patch": bug, "gold_patch": gold,
                                                         "fix_lines": changed_lines(bug)})
    finally:
        _revert(sandbox, applied, candidate.files)
    return verdict, candidate


def _fixed_by_one(sandbox: Sandbox, suite: Suite, parts: list[Kept], union: list[str], timeout_s: float) -> str:
    """The first part whose fix alone (the others applied) makes every test of the union pass; ""."""
    for part in parts:
        if not apply_patch(sandbox, part.candidate.bug_patch, reverse=True):
            return "its fix does not apply"
        try:
            seen = outcomes(suite.run(sandbox, timeout_s, select=union))
        finally:
            apply_patch(sandbox, part.candidate.bug_patch)
        if not any(seen.get(t) in FAILED for t in union):
            return ", ".join(part.candidate.files)
    return ""


def _revert(sandbox: Sandbox, applied: list[Kept], files: list[str]) -> None:
    for part in reversed(applied):
        if not apply_patch(sandbox, part.candidate.bug_patch, reverse=True):
            sandbox.exec(["git", "checkout", "--", *files], timeout=60)
            return
