"""`go test -json` events -> per-test results (ids `import/path::TestName/subtest`) and per-package verdicts.

Nested runs: a suite a test runs inside itself (testing.RunTests in-process, its test binary re-run with the
parent's -test.v=test2json) and a report TestMain prints before the first test are read by test2json as the
package's own events (a child's plain `-v` output is not: it lacks test2json's framing marker). Two rules keep
them out of the results, and each use is counted in a note:
  * structure: top-level tests run one at a time (a parallel one pauses first), so a test that starts while
    another top-level test is running, and whatever it reports until it ends, is output of the running test;
  * the runner's verdict: a failed test in a package `go test` reported ok, or under a parent test whose own
    end event passed, is not a failure Go could have had (a failure fails its parent and its package): the
    test's last non-failing end of its own stands; a test whose start was its own (a `run` event no nested
    run printed) and that has no end of its own, in a package `go test` reported ok, passed, as that
    verdict says (its end was read as a nested run's); the result of anything else (a report with no
    start of its own, or TestMain's own suite, whose names ended failing) is dropped.
"""
from __future__ import annotations

import json

from .results import Result

_OUTCOMES = {"pass": "passed", "fail": "failed", "skip": "skipped"}
_FAILING = ("failed", "error")


def _message(lines: list) -> str:
    kept = "".join(ln for ln in lines if not ln.startswith(("=== RUN", "=== PAUSE", "=== CONT")))
    return kept.strip()[-2000:]


def events(output: str):
    """The JSON events of the output, in order (other lines skipped)."""
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


class _Nesting:
    """One package's top-level tests: which one is running, and which events came from runs nested in it."""

    def __init__(self) -> None:
        self.state: dict = {}
        """top-level test -> "running" / "paused", while it has started and not ended (last: the latest)."""
        self.inside: dict = {}
        """top-level test -> {name started inside it: how many of its runs have not ended}."""
        self.counted: dict = {}
        """top-level test -> results the runs nested in it would have added."""

    def owner(self, action: str, test: str):
        """The top-level test an event of `test` is output of when a nested run printed it, else None."""
        top = test.split("/", 1)[0]
        for outer, names in self.inside.items():
            if names.get(test) or (test != top and names.get(top)):
                return self._nested(outer, action, test)
        if top not in self.state:
            outer = self._running()
            if outer is not None:  # another test is running: no test of this name can start or end now
                return self._nested(outer, action, test)
        elif action == "run" and test == top:  # started again before it ended
            return self._nested(top if self.state[top] == "running" else self._running() or top, action, test)
        if test == top:
            self._own(action, test)
        return None

    def _running(self):
        """The top-level test that started or continued last and has not paused or ended, if any."""
        for test in reversed(list(self.state)):
            if self.state[test] == "running":
                return test
        return None

    def _nested(self, outer: str, action: str, test: str) -> str:
        names = self.inside.setdefault(outer, {})
        if action == "run":
            names[test] = names.get(test, 0) + 1
        elif action in _OUTCOMES and names.get(test):
            names[test] -= 1
            return outer
        if action in _OUTCOMES or action == "run":  # a run, or a report with no run of its own
            self.counted[outer] = self.counted.get(outer, 0) + 1
        return outer

    def _own(self, action: str, test: str) -> None:
        if action in ("run", "cont"):
            self.state.pop(test, None)
            self.state[test] = "running"
        elif action == "pause" and test in self.state:
            self.state[test] = "paused"
        elif action in _OUTCOMES:
            self.state.pop(test, None)
            self.inside.pop(test, None)


def parse(output: str) -> list:
    """Per-test results (see parse_run)."""
    return parse_run(output)[0]


def parse_run(output: str) -> tuple:
    """(results, notes). A package that fails with no failing test of its own (build failure, panic in init or
    TestMain, timeout) is one error named by its import path; a test that started and never ended is an error;
    nested runs' events are their outer test's output, and failures Go could not have had are overridden
    (module docstring), each counted in a note."""
    results: dict = {}
    ends: dict = {}
    logs: dict = {}
    package_logs: dict = {}
    build_logs: dict = {}
    verdicts: dict = {}
    nesting: dict = {}
    started: set = set()
    for event in events(output):
        action, package, test = event.get("Action"), event.get("Package"), event.get("Test")
        if action == "build-output":
            build_logs.setdefault(event.get("ImportPath", ""), []).append(event.get("Output", ""))
        elif package and test:
            outer = nesting.setdefault(package, _Nesting()).owner(str(action), str(test))
            test_id = f"{package}::{outer or test}"
            if outer is None:
                results.setdefault(test_id, None)
                if action == "run":
                    started.add(test_id)
            if action == "output":
                logs.setdefault(test_id, []).append(event.get("Output", ""))
            elif action in _OUTCOMES and outer is None:
                outcome = _OUTCOMES[action]
                message = "" if outcome == "passed" else _message(logs.get(test_id, []))
                results[test_id] = Result(test_id, outcome, float(event.get("Elapsed") or 0), message)
                ends.setdefault(test_id, []).append(results[test_id])
        elif package and action == "output":
            package_logs.setdefault(package, []).append(event.get("Output", ""))
        elif package and action in ("pass", "fail", "skip"):
            verdicts[package] = (action, event.get("FailedBuild", ""))
    out = [r or Result(t, "error", 0.0, _message(logs.get(t, []))) for t, r in results.items()]  # never ended
    out, overridden = _runner_wins(out, ends, {p: v for p, (v, _) in verdicts.items()}, started)
    for package, (verdict, build) in verdicts.items():
        if verdict == "fail" and not any(r.test_id.startswith(package + "::") and r.outcome in _FAILING
                                         for r in out):
            message = _message(build_logs.get(build, []) if build else package_logs.get(package, []))
            out.append(Result(package, "error", 0.0, message or f"{package} failed"))
    return out, _notes(nesting, overridden)


def _runner_wins(results: list, ends: dict, verdicts: dict, started: set) -> tuple:
    """Results with every failure the package's verdict or a parent's own end contradicts replaced by the
    test's last non-failing end, else passed when the test started on its own and never ended in a package Go
    passed, else dropped; and the ids overridden."""
    outcome = {r.test_id: r.outcome for r in results}
    kept, overridden = [], []
    for r in results:
        package, _, name = r.test_id.partition("::")
        parts = name.split("/")
        parents = ["/".join(parts[:i]) for i in range(1, len(parts))]
        if r.outcome not in _FAILING or not (
                verdicts.get(package) == "pass"
                or any(outcome.get(f"{package}::{p}") in ("passed", "skipped") for p in parents)):
            kept.append(r)
            continue
        overridden.append(r.test_id)
        own = [e for e in ends.get(r.test_id, []) if e.outcome not in _FAILING]
        if own:
            kept.append(own[-1])
        elif r.test_id in started and not ends.get(r.test_id) and verdicts.get(package) == "pass":
            kept.append(Result(r.test_id, "passed", r.duration_s, ""))
    return kept, overridden


def _notes(nesting: dict, overridden: list) -> list:
    notes = []
    counted = [(f"{package}::{outer}", n) for package, tests in nesting.items()
               for outer, n in tests.counted.items()]
    if counted:
        notes.append(f"{sum(n for _, n in counted)} per-test result(s) printed by test runs nested inside "
                     "the package's own tests were not counted (they are output of the test that ran them): "
                     + _some([f"{outer} ({n})" for outer, n in counted]))
    if overridden:
        notes.append(f"{len(overridden)} failed result(s) overridden by the runner's own verdict (package "
                     "ok, or a parent test whose own end passed; a real failure fails both): "
                     + _some(overridden))
    return notes


def _some(items: list) -> str:
    return ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")


def package_verdicts(output: str) -> dict:
    """import path -> "pass" / "fail" / "skip": the package-level end events `go test` itself emits."""
    verdicts = {}
    for event in events(output):
        if event.get("Package") and not event.get("Test") and event.get("Action") in ("pass", "fail", "skip"):
            verdicts[event["Package"]] = event["Action"]
    return verdicts
