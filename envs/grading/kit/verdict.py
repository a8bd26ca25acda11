"""From one run to a grade: the runner's per-test results, cross-checked against its exit status and its own
summary, and every selected test credited only when it appears, by its exact id, and passed every time.

    parser    results from          cross-checked against
    junit     the JUnit report      pytest's last line (passed count)
    gotest    `go test -json`       each package's own pass/fail event
    libtest   `cargo test` output   libtest's `test result:` totals
    surefire  the Surefire reports  Maven's `Tests run:` totals
    node      TAP / reporter lines  the runner's summary counts (not TAP's, which count suites); a test
                                    file's process that node:test says ended abnormally
    unittest  verbose lines         `Ran N tests` / `FAILED (...)`
Any run: a non-zero exit with no failing result, or a zero exit with one, means the results do not describe
the run, and nothing is credited.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import doc_tests
from .parsers import gotest, junit, libtest, node, summary, surefire, unittest
from .parsers.results import count

_REPEAT = re.compile(r" \[\d+\]$")
GUARD_MARK = "autoinstall-guard: refused"
"""What the pytest guard prints when it refuses the agent's code (envs/testrun/guard_plugin.py MARK): the run
is graded 0, whatever its tests say."""


@dataclass
class Verdict:
    reward: float
    tests: dict
    """selected id -> passed / failed / error / skipped / missing / ambiguous."""
    problems: list = field(default_factory=list)
    """Why the results were not trusted (each one makes the reward 0)."""
    counts: dict = field(default_factory=dict)
    ran: int = 0


def parse(parser: str, output: str, reports: str) -> tuple:
    """(results, problems) of one run."""
    problems: list = []
    if parser == "junit":
        bodies = [b for b in re.split(r"^==> .* <==$", reports, flags=re.M) if b.strip()]
        if not bodies:
            return [], ["the runner wrote no JUnit report"]
        try:
            results = junit.parse(bodies[0].strip())
        except Exception as e:  # noqa: BLE001 - a report that is not XML is no result
            return [], [f"the JUnit report is not XML ({type(e).__name__})"]
        final = summary.pytest_final(output)
        passed = count(results)["passed"]
        if final is not None and final["passed"] != passed:
            problems.append(f"pytest's summary says {final['passed']} passed, its report {passed}")
        return results, problems
    if parser == "gotest":
        results = gotest.parse(output)
        verdicts = gotest.package_verdicts(output)
        for package, verdict in verdicts.items():
            failing = any(r.outcome in ("failed", "error") for r in results
                          if r.test_id == package or r.test_id.startswith(package + "::"))
            if (verdict == "pass") == failing and verdict != "skip":
                problems.append(f"go test says package {package} {verdict}ed, its tests say otherwise")
        for r in results:
            package = r.test_id.split("::", 1)[0]
            if "::" in r.test_id and package not in verdicts:
                problems.append(f"package {package} has no result of its own (the run was cut short)")
                break
        return results, problems
    if parser == "libtest":
        results = libtest.parse(output)
        totals = libtest.totals(output)
        counts = count(results)
        if totals is not None and (totals["passed"], totals["failed"]) != (counts["passed"], counts["failed"]):
            problems.append(f"libtest's totals ({totals['passed']} passed, {totals['failed']} failed) are not "
                            f"its per-test lines ({counts['passed']} passed, {counts['failed']} failed)")
        return results, problems
    if parser == "surefire":
        results = surefire.parse(reports)
        totals = surefire.totals(output)
        counts = count(results)
        if totals is not None and (totals["passed"], totals["failed"] + totals["error"]) != (
                counts["passed"], counts["failed"] + counts["error"]):
            problems.append(f"Maven's totals ({totals['passed']} passed) are not its reports' ({counts['passed']})")
        return results, problems
    if parser == "node":
        results = node.parse_node_output(output)
        dead = node.dead_processes(output)
        if dead:  # which tests ran in it is not said (node:test's TAP lists a file's tests at the top level)
            problems.append(f"a test process ended abnormally ({dead[0]}) after reporting: no result of "
                            "the run is trusted")
        if not node.looks_like_tap(output):
            said = node.parse_node_summary(output)
            passed = sum(1 for r in results if r.outcome == "passed")
            if said["passed"] and passed > said["passed"]:
                problems.append(f"the runner's summary says {said['passed']} passed, its lines {passed}")
        return results, problems
    if parser == "unittest":
        results = unittest.parse_unittest_verbose(output)
        said = summary.parse(output)
        passed = sum(1 for r in results if r.outcome == "passed")
        if sum(said.values()) and passed > said["passed"]:
            problems.append(f"the runner's summary says {said['passed']} passed, its lines {passed}")
        return results, problems
    return [], [f"unknown report format {parser!r}"]


def judge(parser: str, output: str, reports: str, exit_code: int, timed_out: bool, selected: list,
          exit_consistent: bool = True, moved: dict | None = None) -> Verdict:
    """The grade of one run over `selected`: 1.0 when every one passed and nothing contradicts the results.
    `moved`: the doc-test blocks the agent's code moved (doc_tests.moved_blocks by file), named as the start's."""
    results, problems = parse(parser, output, reports)
    for r in results:
        r.test_id = doc_tests.start_id(r.test_id, moved or {})
    refused = next((line for line in output.splitlines() if GUARD_MARK in line), None)
    if refused:
        what = refused.split(GUARD_MARK, 1)[1].strip()
        problems.append(f"the grader's guard refused what the agent's code did: {what}")
    if timed_out:
        problems.append("the test command ran out of time")
    failing = any(r.outcome in ("failed", "error") for r in results)
    if exit_consistent and exit_code != 0 and not failing:
        problems.append(f"the test command exited {exit_code} but no test failed: its results do not describe the run")
    if exit_consistent and exit_code == 0 and failing:
        problems.append("the test command exited 0 although tests failed: its results do not describe the run")
    by_base: dict = {}
    for r in results:
        by_base.setdefault(_REPEAT.sub("", r.test_id) if parser == "node" else r.test_id, []).append(r)
    tests = {}
    for test_id in selected:
        exact = [r for r in results if r.test_id == test_id]
        group = by_base.get(_REPEAT.sub("", test_id) if parser == "node" else test_id, [])
        if parser == "gotest":  # a package that failed with no failing test of its own fails its every test
            group = group + by_base.get(test_id.split("::", 1)[0], [])
        if not exact:
            tests[test_id] = "missing"
        elif len(exact) > 1:
            tests[test_id] = "ambiguous" if len({r.outcome for r in exact}) > 1 else exact[0].outcome
        elif any(r.outcome != "passed" for r in group):
            tests[test_id] = "ambiguous" if exact[0].outcome == "passed" else exact[0].outcome
        else:
            tests[test_id] = "passed"
    solved = bool(selected) and all(v == "passed" for v in tests.values()) and not problems
    return Verdict(1.0 if solved else 0.0, tests, problems, count(results), len(results))
