"""Stage 5, verify: run the plan's checks once and its tests twice in a sandbox, and judge the result."""
from __future__ import annotations

import shlex
import signal
import time

from autoinstall.ecosystems.services import started_like
from autoinstall.verify.leftout import crash_deselections
from autoinstall.verify.renamed import renamed_note, renamed_subtests
from envs.base import Sandbox
from envs.spec import (
    DEFAULT_MAX_DESELECTED,
    DEFAULT_THRESHOLD,
    Check,
    CheckResult,
    Collection,
    Deselection,
    FailureClass,
    Plan,
    TestRun,
    Verification,
    pass_rate,
)
from envs.testrun import abilities, collect_count, collects, run_tests, test_command

KILLED = 137
"""Exit status of a process ended by SIGKILL: the kernel's OOM killer inside a memory-limited sandbox."""


MAX_CRASHED_TESTS = 3
"""Tests a verification leaves out because a run crashed in them (each time, the runs start over)."""
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE}
"""Signals that mean the test process itself crashed (not a timeout's or the OOM killer's SIGKILL)."""


def crash_signal(run: TestRun) -> str | None:
    """The crash signal's name when the run died on one before reporting any test (shell: 128+N), else None."""
    if run.timed_out or reported_tests(run) or run.exit_code is None:
        return None
    number = run.exit_code - 128 if run.exit_code > 128 else -run.exit_code
    crash = next((s for s in CRASH_SIGNALS if s.value == number), None)
    return crash.name if crash else None


def run_failure_class(run: TestRun) -> FailureClass:
    """Why a test run that did not pass failed: timeout, memory, a crash, collection (none ran), or the tests."""
    if run.timed_out:
        return "tests_timeout"
    if run.exit_code == KILLED and not run.collection_ok:
        return "memory_limit"
    if run.forks_refused:
        return "pids_limit"
    if crash_signal(run):
        return "tests_crashed"
    return "collection_failed" if not run.collection_ok or not reported_tests(run) else "tests_failing"


def reported_tests(run: TestRun) -> bool:
    """True when the run named or counted at least one test (skipped ones included)."""
    return bool(run.results) or any(run.counts.get(k, 0) for k in ("passed", "failed", "error", "skipped"))


def empty_run_reason(run: TestRun, collection: Collection | None) -> str:
    """Why a run that reported no test at all is not a verification, with what it printed."""
    lines = [ln for ln in run.output_tail.strip().splitlines() if ln.strip()]
    printed = f"its last line: {lines[-1].strip()[:200]!r}" if lines else "it printed nothing"
    reason = f"the test command reported no test at all (exit {run.exit_code}; {printed})"
    if crashed := crash_signal(run):
        reason = f"the test process crashed ({crashed}, exit {run.exit_code}) before reporting a test ({printed})"
    if collection is not None and collection.command == 0:
        reason += ": the suite collects no tests"
    elif collection is not None and collection.selected == 0:
        reason += f": every one of its {collection.command} tests is deselected"
    notes = "; ".join(collection.notes) if collection is not None else ""
    return reason + (f" ({notes})" if notes else "")


def check_command(check: Check, deselected: list[Deselection], runner: str | None) -> str:
    """The check's command; a collect check of a runner that can leave out what the test run leaves out does,
    so that a file deselected because it cannot be collected does not fail the check either."""
    narrow = abilities(runner).deselect_in_check if runner and check.kind == "collect" else None
    return narrow(check.command, deselected) if narrow else check.command


def run_check(sandbox: Sandbox, check: Check, timeout_s: float, env: dict[str, str] | None = None,
              deselected: list[Deselection] | None = None, tests: str | None = None,
              runner: str | None = None) -> CheckResult:
    """Run one check; a collect check starts the services first when the test command `tests` does, and leaves
    out what the tests leave out where the `runner` can."""
    command = check_command(check, deselected or [], runner)
    if check.kind == "collect":
        command = started_like(command, tests)
    result = sandbox.exec(command, timeout=timeout_s, env=env)
    return CheckResult(name=check.name, kind=check.kind, command=command, required=check.required,
                       ok=result.ok, exit_code=result.exit_code, duration_s=result.duration_s,
                       output_tail=result.output[-2000:], output=result.output)


def combine(runs: list[TestRun]) -> dict[str, int]:
    """Per-test outcome over all runs: passed only when it passed in every run; differing ones are flaky.

    Runners without per-test results are read from their summary lines: passed is the fewest any run had.
    Subtests named differently in each run are counted through their parent (autoinstall/verify/renamed.py).
    """
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "flaky": 0}
    if not runs:
        return counts
    if not all(r.results for r in runs):
        last = runs[-1]
        counts.update({k: last.counts.get(k, 0) for k in ("failed", "error", "skipped")})
        counts["passed"] = min(r.counts.get("passed", 0) for r in runs)
        counts["failed"] += last.counts.get("passed", 0) - counts["passed"]
        return counts
    seen: dict[str, list[str]] = {}
    renamed = renamed_subtests(runs)
    for run in runs:
        for r in run.results:
            if r.test_id not in renamed:
                seen.setdefault(r.test_id, []).append(r.outcome)
    for outcomes in seen.values():
        if len(set(outcomes)) > 1:
            counts["flaky"] += 1
        elif len(outcomes) < len(runs):
            counts["error"] += 1  # missing from a run: it did not pass there
        else:
            counts[outcomes[0]] += 1
    return counts


def narrow_suite(collection: Collection | None, max_deselected: float) -> str:
    """Why the test command itself covers too little of the default suite ("" when it does not)."""
    if collection is None or not collection.default or collection.command is None:
        return ""
    if collection.command < collection.default * (1 - max_deselected):
        return (f"the test command collects {collection.command} of the {collection.default} tests the suite's "
                "default configuration collects: it runs a side suite, not the project's tests")
    return ""


def partial_reasons(collection: Collection | None, max_deselected: float) -> list[str]:
    """What keeps a passing environment from counting as verified: too much of the suite left out."""
    if collection is None or not collection.suite or collection.selected is None:
        return []
    left_out = 1 - collection.selected / collection.suite
    if left_out > max_deselected:
        return [f"{collection.suite - collection.selected} of {collection.suite} tests "
                f"({left_out:.0%}) are deselected, over the cap of {max_deselected:.0%} (--max-deselected)"]
    return []


def judge(checks: list[CheckResult], runs: list[TestRun], threshold: float,
          collection: Collection | None = None, max_deselected: float = DEFAULT_MAX_DESELECTED) -> tuple[bool, str]:
    """Runs when required checks pass, collection succeeds, >= 1 test passes (in every run) and the pass rate
    >= threshold. How much of the suite that covers (narrow_suite, partial_reasons) makes it partial, not failed."""
    failed = [c.name for c in checks if c.required and not c.ok]
    if failed:
        return False, f"required check(s) failed: {', '.join(failed)}"
    if not runs:
        return False, "no test command"
    last = runs[-1]
    ok, reason = _judge_runs(runs, last, threshold, collection, max_deselected)
    if not ok and last.forks_refused:
        reason += (f" ({last.forks_refused} process creations were refused by the sandbox's process limit: "
                   "--pids raises it)")
    return ok, reason


def _judge_runs(runs: list[TestRun], last: TestRun, threshold: float, collection: Collection | None,
                max_deselected: float) -> tuple[bool, str]:
    if last.timed_out:
        return False, f"the test run hit its timeout after {last.duration_s:.0f} s and was killed"
    if last.exit_code == KILLED and not last.collection_ok:
        return False, ("the test run was killed (exit 137): most likely by the sandbox's memory limit "
                       "(--memory-mb raises it)")
    if not reported_tests(last):
        return False, empty_run_reason(last, collection)
    if not last.collection_ok:
        return False, f"test collection failed (exit {last.exit_code})"
    counts = combine(runs)
    if counts["passed"] == 0:
        return False, "no test passed" + (" in every run" if len(runs) > 1 and last.passed else "")
    rate = pass_rate(counts)
    if rate < threshold:
        return False, f"pass rate {rate:.2f} below threshold {threshold:.2f}"
    ran = sum(counts[k] for k in ("passed", "failed", "error", "flaky"))
    note = renamed_note(renamed_subtests(runs))
    return True, (f"{counts['passed']}/{ran} tests passed" + (" in every run" if len(runs) > 1 else "")
                  + (f" ({note})" if note else ""))


def flaky_tests(runs: list[TestRun]) -> list[str]:
    outcomes: dict[str, set[str]] = {}
    for run in runs:
        for r in run.results:
            outcomes.setdefault(r.test_id, set()).add(r.outcome)
    return sorted(t for t, seen in outcomes.items() if len(seen) > 1)


def verify(sandbox: Sandbox, plan: Plan, deselected: list[Deselection], *, runs: int = 2,
           threshold: float = DEFAULT_THRESHOLD, timeout_s: float = 1800, env: dict[str, str] | None = None,
           max_deselected: float = DEFAULT_MAX_DESELECTED, per_test_timeout_s: float | None = None,
           prior: TestRun | None = None) -> Verification:
    """Run checks once and the tests `runs` times; the last run decides, differing outcomes are flaky.

    Each test may run `per_test_timeout_s` (None: run_tests' default) before it is stopped and fails. `prior`
    (the install phase's last run of the same tree, `deselected` left out) stands for the first of two or more
    runs when the first run here agrees with it test for test (`same_outcomes`); otherwise it is set aside and
    every run is made here."""
    started = time.monotonic()
    checks = [run_check(sandbox, c, timeout_s, env, deselected, test_command(plan), plan.test_runner) for c in plan.checks
              if c.kind not in ("tests", "collect") or (c.kind == "collect" and collects(plan.test_runner))]
    collection = count_suite(sandbox, plan, deselected, timeout_s, env)
    test_runs: list[TestRun] = []
    crashed: list[TestRun] = []
    crashed_tests: list[Deselection] = []
    while test_command(plan) is not None and len(test_runs) < runs:
        remaining = max(60.0, timeout_s - (time.monotonic() - started))
        left_out = [*deselected, *crashed_tests]
        run = run_tests(sandbox, test_command(plan), plan.test_runner, left_out, remaining, env,
                        per_test_timeout_s)
        if len(crashed_tests) < MAX_CRASHED_TESTS and (found := crash_deselections(run, left_out,
                                                                                  crash_signal(run))):
            crashed_tests += found  # the run names the test it died in: without it, the runs start over
            crashed.append(run.model_copy(update={"output": ""}))
            test_runs = []
            continue
        if crash_signal(run) and not crashed:  # once: a process that crashes again is the verdict
            crashed.append(run.model_copy(update={"output": ""}))
            continue
        test_runs.append(run)
        if crash_signal(run):
            break
        if prior is not None and runs > 1 and not crashed_tests and len(test_runs) == 1:
            if same_outcomes(prior, run):  # two runs of the tree that agree: the install's stands for one
                test_runs.insert(0, prior.model_copy(update={"sandbox": "install"}))
            prior = None
    if crashed_tests:  # counted against the cap like every deselection
        collection = count_suite(sandbox, plan, [*deselected, *crashed_tests], timeout_s, env)
    return _verdict(plan, checks, collection, test_runs, threshold, max_deselected, crashed, crashed_tests)


def with_install_run(made: Verification, plan: Plan, prior: TestRun | None, runs: int) -> Verification | None:
    """`made`, the image's verification of one run made beside the install phase (its checks, its suite's size,
    one run), completed by `prior`, the install phase's last run, standing for the first of two runs: what
    `verify(..., runs=2, prior=prior)` comes to when its first run agrees with `prior`. None when it cannot
    stand (other than two runs asked, no prior, a crash, the runs disagree): the image is verified again."""
    if (prior is None or runs != 2 or len(made.runs) != 1 or made.crashed_runs or made.crashed_tests
            or not same_outcomes(prior, made.runs[0])):
        return None
    first = prior.model_copy(update={"sandbox": "install"})
    return _verdict(plan, made.checks, made.collection, [first, made.runs[0]], made.threshold, made.max_deselected,
                    [], [])


def _verdict(plan: Plan, checks: list[CheckResult], collection: Collection | None, test_runs: list[TestRun],
             threshold: float, max_deselected: float, crashed: list[TestRun],
             crashed_tests: list[Deselection]) -> Verification:
    """The verification of these checks and runs: judged, the outputs left out (the record keeps the tails)."""
    if abilities(plan.test_runner).listing_is_lower_bound:
        collection = with_ran(collection, combine(test_runs))
    ok, reason = judge(checks, test_runs, threshold, collection, max_deselected)
    # The whole outputs were for diagnosis, which follows no verification: the record keeps the tails.
    checks = [c.model_copy(update={"output": ""}) for c in checks]
    test_runs = [r.model_copy(update={"output": ""}) for r in test_runs]
    if crashed_tests:
        reason += (f" ({len(crashed_tests)} test{'s' if len(crashed_tests) > 1 else ''} the test process crashed "
                   f"in left out: {', '.join(d.test for d in crashed_tests)}; the runs started over without it)")
    elif crashed:
        reason += f" (a run crashed with {crash_signal(crashed[0])} before reporting a test and was run again)"
    if test_runs and test_runs[0].sandbox == "install":
        reason += " (the first run: the install phase's last, which the image's agreed with test for test)"
    return Verification(verified=ok, reason=reason, checks=checks, runs=test_runs, flaky=flaky_tests(test_runs),
                        threshold=threshold, max_deselected=max_deselected, collection=collection,
                        counts=combine(test_runs), crashed_runs=crashed, crashed_tests=crashed_tests)


def same_outcomes(a: TestRun, b: TestRun) -> bool:
    """Whether two runs ended alike: the same exit code and counts, each test with the same outcome, neither
    stopped by its timeout, both collected."""
    return (a.exit_code == b.exit_code and a.counts == b.counts and not a.timed_out and not b.timed_out
            and a.collection_ok and b.collection_ok and not crash_signal(a) and not crash_signal(b)
            and {r.test_id: r.outcome for r in a.results} == {r.test_id: r.outcome for r in b.results}
            and len(a.results) == len(b.results))


def count_suite(sandbox: Sandbox, plan: Plan, deselected: list[Deselection], timeout_s: float,
                env: dict[str, str] | None = None) -> Collection | None:
    """The suite's size by the runner: the default configuration, the test command, and what is selected."""
    command = test_command(plan)
    if command is None or not collects(plan.test_runner):
        return None
    collection = Collection()
    collection.command, note = collect_count(sandbox, command, [], timeout_s, env, plan.test_runner)
    notes = [note]
    if deselected:
        collection.selected, note = collect_count(sandbox, command, deselected, timeout_s, env, plan.test_runner)
        notes.append(note)
    else:
        collection.selected = collection.command
    default = default_command(plan)
    if default and command.split() != default.split():
        collection.default, note = collect_count(sandbox, default, [], timeout_s, env, plan.test_runner)
        notes.append(note and f"default configuration: {note}")
    else:
        collection.default = collection.command
    collection.notes = [n for n in notes if n]
    return with_uncollected(collection, deselected)


def default_command(plan: Plan) -> str | None:
    """The runner with nothing but the project's configuration, in the plan's folder, starting the services the
    test command starts: what collects "the default collection" (None: the runner has no such command)."""
    default = abilities(plan.test_runner).default_command
    if default and plan.workdir not in ("", "."):
        default = f"cd {shlex.quote(plan.workdir)} && {default}"  # the runner's configuration is the project's
    return started_like(default, test_command(plan)) if default else None


def with_uncollected(collection: Collection, deselected: list[Deselection]) -> Collection:
    """Add the tests of files deselected because they cannot be collected (a static count) to the suite's size:
    the runner never counted them, and left out they must still count against the deselection cap."""
    uncollected = sum(d.uncollected or 0 for d in deselected)
    if not uncollected:
        return collection
    files = sum(1 for d in deselected if d.uncollected)
    return _grow(collection, uncollected, f"{uncollected} tests in {files} files or modules that cannot be "
                 "collected or built here are counted as deselected (a static count of their tests)")


def _grow(collection: Collection, tests: int, note: str, *, selected: bool = False) -> Collection:
    """`tests` more in the suite's counts (and in the selection too when they ran), with the note saying why."""
    if selected and collection.selected is not None:
        collection.selected += tests
    if collection.command is not None:
        collection.command += tests
    if collection.default:
        collection.default += tests
    collection.notes.append(note)
    return collection


def with_ran(collection: Collection | None, counts: dict[str, int]) -> Collection | None:
    """A listing that counted fewer tests than ran is a lower bound: the suite grows to what ran, its
    deselections unchanged."""
    if collection is None or collection.selected is None:
        return collection
    extra = sum(counts.values()) - collection.selected
    if extra <= 0:
        return collection
    return _grow(collection, extra, f"{extra} more tests ran than the runner's listing counted (cases expanded "
                 "at run time): the counts are raised to what ran", selected=True)
