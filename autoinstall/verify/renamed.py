"""Subtests whose names change from run to run: counted through the parent test that ran them.

A suite can name its subtests from values that differ in every process (`t.Run(fmt.Sprintf("%#v", x))` with a
pointer in x prints its address; a `time.Now()` prints the clock), so the same subtest has another id in each
run, and an id that is missing from a run would count as a test that did not pass there. When the nearest
enclosing test (`parent/child`, as `go test` names subtests) passed in every run and the id never failed, the
subtest did pass: its parent's pass says so (a failing subtest fails its parent). It is then left out of the
per-test counts, counted through that parent, and named in a note; anything else stays an error.
"""
from __future__ import annotations

from envs.spec import TestRun

SEPARATOR = "/"
"""What separates a subtest from the test that runs it in an id (`pkg::TestA/case`)."""


def _parents(test_id: str) -> list[str]:
    """The enclosing tests' ids, nearest first (none for a top-level test)."""
    head, sep, name = test_id.rpartition("::")
    parts = name.split(SEPARATOR)
    return [f"{head}{sep}{SEPARATOR.join(parts[:i])}" for i in range(len(parts) - 1, 0, -1)]


def renamed_subtests(runs: list[TestRun]) -> set[str]:
    """The ids missing from some run that are subtests of a test that passed in every run, never failing."""
    if len(runs) < 2:
        return set()
    outcomes = [{r.test_id: r.outcome for r in run.results} for run in runs]
    seen: set[str] = set().union(*outcomes)
    renamed = set()
    for test_id in seen:
        mine = [o[test_id] for o in outcomes if test_id in o]
        if len(mine) == len(runs) or any(outcome not in ("passed", "skipped") for outcome in mine):
            continue
        enclosing = [p for p in _parents(test_id) if all(p in o for o in outcomes)][:1]
        if enclosing and all(o[enclosing[0]] == "passed" for o in outcomes):
            renamed.add(test_id)
    return renamed


def renamed_note(renamed: set[str]) -> str:
    """What the verification's reason says about them ("" when there are none)."""
    if not renamed:
        return ""
    some = sorted(renamed)[:2]
    return (f"{len(renamed)} subtest(s) named differently in each run (names built from addresses or the clock) "
            f"were counted through the parent test that passed in every run, e.g. {', '.join(some)}")
