"""What makes a task hard (envs.task.TaskFeatures), and the `difficulty` bucket derived from it.

Points, summed: fix lines (<=2: 0, <=10: 1, <=40: 2, more: 3); fix files (1: 0, 2: 1, more: 2); no failing
test names a changed function: 1; calls from the nearest failing test to a change (1: 0, 2-3: 1, farther: 2,
not found: 1); each part of a combined task past the first: 1. easy <= 1 < medium <= 3 < hard.
"""
from __future__ import annotations

import re

from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.codeindex import CodeIndex
from envs.task import Difficulty, TaskFeatures

EASY_MAX, MEDIUM_MAX = 1, 3


def changed_functions(candidate: Candidate, index: CodeIndex | None) -> list[str]:
    """`file::qualified.name` of every function the fix changes: a mutation's own, else by the patch."""
    named = [f"{m.file}::{m.function}" for m in [candidate.mutation, *(p.mutation for p in candidate.parts)]
             if m is not None]
    found = [f.key for f in index.changed(candidate.bug_patch)] if index else []
    return sorted(set(named) | set(found))


def features(candidate: Candidate, fail_to_pass: list[str], index: CodeIndex | None) -> TaskFeatures:
    changed = changed_functions(candidate, index)
    shorts = {key.rsplit("::", 1)[-1].rsplit(".", 1)[-1] for key in changed}
    named, distances = False, []
    for test_id in fail_to_pass:
        test = index.test_function(test_id) if index else None
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", test_id)) | (set(test.refs) if test else set())
        named = named or bool(shorts & words) or any(_named_in(s, test_id) for s in shorts)
        if test is not None and changed:
            distance = index.distance(test, set(changed)) if index else None
            if distance is not None:
                distances.append(distance)
    return TaskFeatures(fix_files=len(candidate.files), fix_lines=candidate.fix_lines,
                        failing_tests=len(fail_to_pass), changed_functions=changed, tests_name_function=named,
                        call_distance=min(distances) if distances else None, parts=max(1, len(candidate.parts)))


def _named_in(short: str, test_id: str) -> bool:
    """`clamp` in `test_clamp_high`, `parse_url` in `TestParseURL`: the name's words in the test's name."""
    mine, theirs = _words(short), _words(test_id)
    return bool(mine) and len("".join(mine)) >= 3 and any(
        theirs[i:i + len(mine)] == mine for i in range(len(theirs) - len(mine) + 1))


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", name))
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def points(f: TaskFeatures) -> int:
    lines = 0 if f.fix_lines <= 2 else 1 if f.fix_lines <= 10 else 2 if f.fix_lines <= 40 else 3
    files = 0 if f.fix_files <= 1 else 1 if f.fix_files == 2 else 2
    distance = 1 if f.call_distance is None else 0 if f.call_distance <= 1 else 1 if f.call_distance <= 3 else 2
    return lines + files + (0 if f.tests_name_function else 1) + distance + (f.parts - 1)


def bucket(f: TaskFeatures) -> Difficulty:
    score = points(f)
    return "easy" if score <= EASY_MAX else "medium" if score <= MEDIUM_MAX else "hard"
