"""Trying candidates: the search run (one long-lived container, the bug applied, the suite run, the bug
reverted) and the validation of a kept candidate (a fresh container, twice with the bug, twice fixed).

A candidate is kept when 1..K tests of the baseline fail (FAIL_TO_PASS) and every other baseline test
passes (PASS_TO_PASS); the baseline is what passes on the untouched tree, minus the flaky tests of
verification. A run that times out (a mutation that hangs the suite) drops the candidate.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from pydantic import BaseModel, Field

from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.containers import Containers
from autoinstall.tasks.workspace import FAILED, Suite, apply_patch, git_diffs, outcomes
from envs.base import Sandbox, SandboxFactory, read_capped
from envs.spec import EnvSpec, TestRun
from envs.testrun import abilities
from envs.task import TaskValidation


class Verdict(BaseModel):
    """What one search run of a candidate showed."""

    kept: bool
    reason: str = ""
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: list[str] = Field(default_factory=list)
    messages: dict[str, str] = Field(default_factory=dict)
    """test id -> the failure message (for the problem statement)."""
    judged: list[str] | None = None
    """The tests the search's run judged (FAIL_TO_PASS failed, the rest passed), on the same tree as the
    bug state: validation counts that run as one of its bug runs when it judged every test the run would
    (validate's `searched`). None: unknown."""


def baseline(run: TestRun, flaky: list[str]) -> list[str]:
    """The tests that pass on the untouched tree (not flaky): where FAIL_TO_PASS/PASS_TO_PASS come from."""
    skip = set(flaky)
    return sorted(r.test_id for r in run.results if r.outcome == "passed" and r.test_id not in skip)


def stable_ids(passing: list[str], spec: EnvSpec) -> tuple[list[str], int]:
    """The baseline's passing tests whose ids every verification run reported too, and how many were left
    out: an id that changes from run to run (parametrized by an object's address, a random value, the
    order of a set under another hash seed) names no test another run can find, so the search could only
    call it missing and the grader could never pay it. Unchanged when the verification kept no per-test
    results, or reported less than half of these ids (it ran another selection)."""
    runs = [r for r in (spec.verification.runs if spec.verification else []) if r.results]
    if not runs:
        return passing, 0
    everywhere = set.intersection(*({r.test_id for r in run.results} for run in runs))
    kept = [t for t in passing if t in everywhere]
    if len(kept) < len(passing) / 2:
        return passing, 0
    return kept, len(passing) - len(kept)


def selectable_ids(sandbox: Sandbox, suite: Suite, passing: list[str], timeout_s: float) -> tuple[list[str], int]:
    """The baseline's passing tests that a run selecting them all reports passed, and how many were left out,
    for a runner whose selection matches the names its output printed (IdSelection.exact False): a name the
    parse changed selects nothing, so its test would be missing from every selecting run, the grader's
    included. Unchanged (and nothing run) for an exact selection or none."""
    select = abilities(suite.runner).select
    if select is None or select.exact or not passing:
        return passing, 0
    seen = outcomes(suite.run(sandbox, timeout_s, select=passing))
    kept = [t for t in passing if seen.get(t) == "passed"]
    return kept, len(passing) - len(kept)


def judge(run: TestRun, passing: list[str], max_fail: int, crashed: bool = False) -> Verdict:
    """Keep when 1..max_fail baseline tests fail and all the other baseline tests pass. `crashed` (the run's
    test process ended early: RunnerAbilities.ended_early): the tests it never reported did not run, and are
    kept as PASS_TO_PASS (every validation gold run must still see them pass)."""
    if run.timed_out:
        return Verdict(kept=False, reason="timeout")
    seen = outcomes(run)
    messages = {r.test_id: r.message for r in run.results if r.outcome in FAILED}
    failing = [t for t in passing if seen.get(t) in FAILED]
    if not failing:
        return Verdict(kept=False, reason="the test process crashed before reporting a failure" if crashed
                       else "no test fails")
    if len(failing) > max_fail:
        return Verdict(kept=False, reason="too many tests fail")
    missing = [t for t in passing if t not in seen]
    if missing and not crashed:
        broken = any(r.outcome == "error" and r.test_id not in set(passing) for r in run.results)
        return Verdict(kept=False, reason="breaks test collection" if broken else "tests missing from the run")
    rest = [t for t in passing if t not in failing]
    if any(seen.get(t) != "passed" for t in rest if t in seen):
        return Verdict(kept=False, reason="other tests changed")
    return Verdict(kept=True, fail_to_pass=failing, pass_to_pass=rest,
                   messages={t: messages.get(t, "") for t in failing})


def search(sandbox: Sandbox, suite: Suite, candidate: Candidate, passing: list[str], *, max_fail: int,
           timeout_s: float, exact_patches: bool,
           selection: list[str] | None = None) -> tuple[Verdict, Candidate]:
    """Apply the candidate in the search container, run the suite (only `selection` when given: the tests
    that reach the change), revert. With `exact_patches` (the tree is a git checkout) a kept candidate's
    patches are re-made by `git diff`, so their line numbers are the environment's own."""
    if selection is not None and not selection:
        return Verdict(kept=False, reason="no test reaches it"), candidate
    if not apply_patch(sandbox, candidate.bug_patch):
        return Verdict(kept=False, reason="does not apply"), candidate
    try:
        run = suite.run(sandbox, timeout_s, max_fail=max_fail + 1, select=selection)
        if selection is not None and _unselected(run, selection, passing):
            # A runner that selects coarser units (whole top-level tests) ran more: those are judged too. One that
            # cannot select ran the whole suite: judged whole.
            selection = sorted(set(selection) | _ran(run) & set(passing)) if suite.selects else None
        verdict = judge(run, selection if selection is not None else passing, max_fail,
                        abilities(suite.runner).ended_early(run))
        if verdict.kept:
            verdict.judged = list(selection if selection is not None else passing)
        if verdict.kept and selection is not None:
            verdict.pass_to_pass = [t for t in passing if t not in verdict.fail_to_pass]
        if verdict.kept and exact_patches:
            bug, gold = git_diffs(sandbox, candidate.files)
            if bug and gold:
                candidate = candidate.model_copy(update={"bug_patch": bug, "gold_patch": gold})
    finally:
        if not apply_patch(sandbox, candidate.bug_patch, reverse=True):
            sandbox.exec(["git", "checkout", "--", *candidate.files], timeout=60)
    return verdict, candidate


def _unselected(run: TestRun, selection: list[str], passing: list[str]) -> bool:
    """The run ran baseline tests outside the selection: its runner does not select by id, or selects coarser
    units than ids."""
    chosen = set(selection)
    return any(t not in chosen for t in _ran(run) & set(passing))


def _ran(run: TestRun) -> set[str]:
    """The tests a run ran: a runner that selects by name reports the others as skipped (jest, node:test)."""
    return {r.test_id for r in run.results if r.outcome != "skipped"}


class Disagreement(BaseModel):
    """Which validation run disagreed with the search, and how."""

    run: str
    """`bug run N`, `gold run N`, `bug patch` or `gold patch` (did not apply)."""
    how: str
    """timeout; flaky (an earlier run of the same state agreed); order-dependent (the whole suite's first run
    disagrees with a search that ran only the tests reaching the change); fresh container (the first run
    disagrees with a search of the whole suite in the long-lived container); not reported (a listed test id
    missing from the run)."""
    tests: list[str] = Field(default_factory=list)
    """The tests that disagreed (at most 5)."""

    def __str__(self) -> str:
        shown = f": {', '.join(self.tests)}" if self.tests else ""
        return f"{self.run}: {self.how}{shown}"


def validate(factory: SandboxFactory, image: str, suite: Suite, candidate: Candidate, verdict: Verdict, *,
             runs: int = 2, timeout_s: float, gold_select: list[str] | None = None,
             bug_select: list[str] | None = None, searched_selection: bool = False,
             containers: Containers | None = None, searched: list[str] | None = None,
             baseline_counts: bool = False) -> tuple[TaskValidation, Disagreement | None]:
    """Run the task `runs` times both ways in a validation container (a fresh one, or, from `containers`, one
    an earlier validation left exactly as it found it): with the bug every FAIL_TO_PASS test fails and every
    PASS_TO_PASS test passes; with the gold patch applied on the bug, all of them pass. Returns what was seen
    and, when it failed, the first disagreement.

    The first bug run is always the whole suite (a change seen at import time, or a test that fails only after
    others, shows there). `bug_select` (FAIL_TO_PASS and the tests that reach a change inside a function
    body: no other test runs it) shortens the later bug runs. `gold_select` shortens the gold runs, only
    when the gold patch gives back the changed files byte for byte: the tree is then the environment's own,
    whose whole suite the baseline run saw pass (flaky tests excluded). Otherwise the whole suite runs.
    `searched_selection`: the search ran only the tests reaching the change (tells order-dependence apart).

    Runs already seen count, so no state is run more often than `runs` times in all: `searched` (the tests the
    search's run judged on the same bug state, Verdict.judged) stands for a later bug run whose tests it holds
    all of; with `baseline_counts`, the baseline's run (every listed test passed on the untouched tree, as in
    both verification runs) stands for one gold run when the gold patch gave the files back byte for byte (the
    tree is then that same tree). The first bug run and the first gold run always run here.
    """
    started = time.monotonic()
    result, why = TaskValidation(), None
    with _pool(containers, factory, image, suite) as pool, pool.lease(candidate.files) as (sandbox, restored):
        original = _contents(sandbox, candidate.files)
        if not apply_patch(sandbox, candidate.bug_patch):
            return result, Disagreement(run="bug patch", how="does not apply in a fresh container")
        f2p_failed, p2p_passed = True, True
        listed = [*verdict.fail_to_pass, *verdict.pass_to_pass]
        for n in range(runs - _seen_before(runs, searched, bug_select or listed)):
            select = bug_select if n > 0 else None
            run = suite.run(sandbox, timeout_s, select=select)
            seen = outcomes(run)
            unrun = abilities(suite.runner).ended_early(run)  # a failing test ended the process: the rest never ran
            wrong_f2p = [t for t in verdict.fail_to_pass if seen.get(t) not in FAILED]
            wrong_p2p = [t for t in (select or verdict.pass_to_pass)
                         if t not in verdict.fail_to_pass and seen.get(t) != "passed" and not (unrun and t not in seen)]
            f2p_failed &= not wrong_f2p
            p2p_passed &= not wrong_p2p
            if wrong_f2p or wrong_p2p:
                why = _disagreement(f"bug run {n + 1}", n, run.timed_out, seen, [*wrong_f2p, *wrong_p2p],
                                    searched_selection)
                break
        gold_passed = f2p_failed and p2p_passed and apply_patch(sandbox, candidate.gold_patch)
        if f2p_failed and p2p_passed and not gold_passed:
            why = Disagreement(run="gold patch", how="does not apply on the bug state")
        same = original is not None and _contents(sandbox, candidate.files) == original
        select = gold_select if gold_select and same else None
        if not gold_passed and apply_patch(sandbox, candidate.bug_patch, reverse=True, check_only=True):
            apply_patch(sandbox, candidate.bug_patch, reverse=True)
            same = original is not None and _contents(sandbox, candidate.files) == original
        gold_runs = runs - (1 if baseline_counts and same and runs > 1 else 0)
        for n in range(gold_runs if gold_passed else 0):
            run = suite.run(sandbox, timeout_s, select=select)
            seen = outcomes(run)
            wrong = [t for t in (select or listed) if seen.get(t) != "passed"]
            if wrong:
                gold_passed = False
                why = _disagreement(f"gold run {n + 1}", n, run.timed_out, seen, wrong, searched_selection,
                                    gold=True)
                break
        if same:
            restored()
    result.runs = runs
    result.bug_fail_to_pass_failed = f2p_failed
    result.bug_pass_to_pass_passed = p2p_passed
    result.gold_all_passed = gold_passed
    result.seconds = round(time.monotonic() - started, 2)
    return result, why


@contextlib.contextmanager
def _pool(containers: Containers | None, factory: SandboxFactory, image: str, suite: Suite) -> Iterator[Containers]:
    """`containers`, else a pool of this validation's own, closed (its container stopped) when it ends."""
    if containers is not None:
        yield containers
        return
    own = Containers(factory, image, suite)
    try:
        yield own
    finally:
        own.close()


def _seen_before(runs: int, searched: list[str] | None, tests: list[str]) -> int:
    """1 when the search's run (`searched`) judged every one of `tests` and there is a later bug run it can
    stand for, else 0."""
    return int(runs > 1 and searched is not None and set(tests) <= set(searched))


def _disagreement(run: str, n: int, timed_out: bool, seen: dict[str, str], wrong: list[str],
                  searched_selection: bool, gold: bool = False) -> Disagreement:
    missing = [t for t in wrong if t not in seen]
    if timed_out:
        how = "timeout"
    elif missing and len(missing) == len(wrong):
        how = "not reported (the run names these tests otherwise)"
    elif n > 0:
        how = "flaky (an earlier run of the same state agreed)"
    elif gold:
        how = "fails with the fix applied"
    elif searched_selection:
        how = "order-dependent (the whole suite disagrees with the tests that reach the change)"
    else:
        how = "fresh container (disagrees with the search's long-lived container)"
    return Disagreement(run=run, how=how, tests=(missing or wrong)[:5])


def _contents(sandbox: Sandbox, files: list[str]) -> dict[str, bytes | None] | None:
    """path -> bytes (None when absent); None in all when one cannot be compared whole (past REPORT_CAP_BYTES,
    or a directory)."""
    out: dict[str, bytes | None] = {}
    for path in files:
        try:
            data, note = read_capped(sandbox, path)
        except FileNotFoundError:
            out[path] = None
            continue
        except IsADirectoryError:
            return None
        if note:
            return None
        out[path] = data
    return out
