"""Nested test runs under `go test -json`: a suite run inside a test (testing.RunTests, the test binary re-run
with the parent's flags, a report printed by TestMain) gets read by test2json as the package's own events.
The recorded results agree with the package's verdict and with each parent test's own end. Fast: captured
streams, no Docker, no Go."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.grading.kit.parsers import gotest
from envs.grading.kit.verdict import judge
from envs.testrun import parse_go_test_json, run_tests
from envs.testrun.go_runner import parse_go_test_run

DATA = Path(__file__).parent / "data"
NESTED = (DATA / "go_nested_runs_events.jsonl").read_text()
"""Captured: `go test -json -count=1 -vet=off ./...` in tests/fixtures/repos/go_nested_runs (go1.26): every
package ok."""
DEBIAN = (DATA / "go_nested_runs_events_go1.24.jsonl").read_text()
"""The same as NESTED by Debian trixie's go1.24 in the golang-go base image (network off)."""
REAL_FAILURE = (DATA / "go_nested_runs_real_failure_events.jsonl").read_text()
"""The same with NESTED_REAL_FAILURE=1: harness::TestControl, a real test beside the nested runs, fails."""
H, S = "example.com/nestedruns/harness::", "example.com/nestedruns/selftest::"
OWN = ["example.com/nestedruns/calc::TestAdd", "example.com/nestedruns/calc::TestAbs",
       *(f"example.com/nestedruns/calc::TestAbs/#0{i}" for i in range(3)),
       *(H + t for t in ("TestFrameworkReportsFailures", "TestRunTestsInProcess", "TestHelperProcess",
                         "TestSelfExec", "TestSelfExecSubtest", "TestNestedGoTest")),
       S + "TestReady", H + "TestControl"]
"""The package's own tests, in the order they first appear."""


def _stream(*events: tuple[str, str | None]) -> str:
    """`go test -json` lines of package m/p: (action, test or None for the package's own end)."""
    return "\n".join(json.dumps({"Action": a, "Package": "m/p", **({"Test": t} if t else {})})
                     for a, t in events)


@pytest.mark.parametrize("stream", [NESTED, DEBIAN], ids=["go1.26", "go1.24"])
def test_the_capture_has_the_failure_events_nested_runs_print(stream: str) -> None:
    failed = [(e["Package"].rsplit("/", 1)[1], e.get("Test")) for e in gotest.events(stream)
              if e["Action"] == "fail"]
    assert failed == [("harness", "TestInProcessFails"), ("harness", "TestHelperProcess"),
                      ("harness", "TestSelfExecSubtest/child"), ("harness", "TestSelfExecSubtest"),
                      ("selftest", "TestMainSuiteFails")]
    assert set(gotest.package_verdicts(stream).values()) == {"pass"}


@pytest.mark.parametrize("stream", [NESTED, DEBIAN], ids=["go1.26", "go1.24"])
def test_nested_runs_are_not_recorded_as_failures(stream: str) -> None:
    results = parse_go_test_json(stream)
    assert [r.test_id for r in results] == OWN
    outcomes = {r.test_id: r.outcome for r in results}
    assert {o for t, o in outcomes.items() if t != H + "TestHelperProcess"} == {"passed"}
    assert outcomes[H + "TestHelperProcess"] == "skipped"  # its own end; the re-run child's fail is not its


def test_each_change_is_counted_in_a_note() -> None:
    nested, overridden = parse_go_test_run(NESTED)[1]
    assert nested.startswith("5 per-test result(s) printed by test runs nested inside the package's own")
    assert f"{H}TestRunTestsInProcess (2), {H}TestSelfExec (1), {H}TestSelfExecSubtest (2)" in nested
    assert overridden.startswith("1 failed result(s) overridden by the runner's own verdict (package ok,")
    assert overridden.endswith(S + "TestMainSuiteFails")  # printed before any test: only the verdict says so
    assert gotest.parse_run(NESTED)[1] == [nested, overridden]


def test_a_real_failure_beside_nested_runs_is_still_failed() -> None:
    results, _ = parse_go_test_run(REAL_FAILURE)
    assert [r.test_id for r in results] == OWN
    assert [(r.test_id, r.outcome) for r in results if r.outcome != "passed"] == [
        (H + "TestHelperProcess", "skipped"), (H + "TestControl", "failed")]
    assert "a real failure" in results[-1].message


def test_the_runner_records_no_failure_and_ends_its_tail_with_the_notes() -> None:
    box = FakeSandbox(rules=[("go test", ExecResult(exit_code=0, stdout=NESTED))]).start()
    run = run_tests(box, "go test -json -count=1 -vet=off ./...", "go", [], 60)
    assert run.counts == {"passed": 12, "failed": 0, "error": 0, "skipped": 1}
    notes = run.output_tail.splitlines()[-2:]
    assert notes[0].startswith("[autoinstall] 5 per-test result(s) printed by test runs nested")
    assert notes[1].startswith("[autoinstall] 1 failed result(s) overridden")


def test_the_grader_credits_the_nested_run_package_and_not_a_real_failure() -> None:
    ran = [t for t in OWN if t != H + "TestHelperProcess"]  # skipped: never credited
    passing = judge("gotest", NESTED, "", 0, False, ran)
    assert (passing.reward, passing.problems) == (1.0, [])
    failing = judge("gotest", REAL_FAILURE, "", 1, False, ran)
    assert (failing.reward, failing.problems, failing.tests[H + "TestControl"]) == (0.0, [], "failed")


def test_a_failed_subtest_under_a_parent_that_passed_is_overridden() -> None:
    events = _stream(("run", "TestA"), ("run", "TestA/printed"), ("fail", "TestA/printed"), ("pass", "TestA"),
                     ("run", "TestB"), ("fail", "TestB"), ("fail", None))
    results, notes = gotest.parse_run(events)
    assert [(r.test_id, r.outcome) for r in results] == [("m/p::TestA", "passed"), ("m/p::TestB", "failed")]
    assert notes == ["1 failed result(s) overridden by the runner's own verdict (package ok, or a parent "
                     "test whose own end passed; a real failure fails both): m/p::TestA/printed"]


def test_genuine_failures_stay_failed() -> None:
    rerun = _stream(("run", "TestA"), ("pass", "TestA"), ("run", "TestA"), ("fail", "TestA"),
                    ("fail", None))  # -count=2, failing the second time
    assert [(r.test_id, r.outcome) for r in parse_go_test_json(rerun)] == [("m/p::TestA", "failed")]
    parallel = _stream(("run", "TestA"), ("pause", "TestA"), ("run", "TestB"), ("pass", "TestB"),
                       ("cont", "TestA"), ("fail", "TestA"), ("fail", None))  # TestB starts while A is paused
    assert gotest.parse_run(parallel) == (gotest.parse(parallel), [])
    assert [(r.test_id, r.outcome) for r in parse_go_test_json(parallel)] == [
        ("m/p::TestA", "failed"), ("m/p::TestB", "passed")]


def test_a_product_init_faking_a_run_of_the_failing_test_earns_nothing() -> None:
    """Captured (go1.26): init() prints `=== RUN TestFix`, `--- PASS: TestFix`, `=== RUN TestFix` before any
    test, so the real TestFix looks nested in a fake one; the package's FAIL still fails every test in it."""
    events = _stream(("run", "TestFix"), ("pass", "TestFix"), ("run", "TestFix"), ("run", "TestFix"),
                     ("fail", "TestFix"), ("run", "TestOther"), ("pass", "TestOther"), ("fail", None))
    results = gotest.parse(events)
    assert ("m/p", "error") in [(r.test_id, r.outcome) for r in results]
    verdict = judge("gotest", events, "", 1, False, ["m/p::TestFix", "m/p::TestOther"])
    assert verdict.reward == 0.0 and verdict.tests["m/p::TestFix"] == "ambiguous"


def test_a_test_that_started_and_whose_end_never_came_passes_when_its_package_passed() -> None:
    """Two verification runs of stretchr/testify disagreed: parallel tests ending together had their ends read
    as a nested run's in one run only, and were dropped there. Go's ok says every test that ran passed."""
    lost_end = _stream(("run", "TestA"), ("pause", "TestA"), ("cont", "TestA"), ("run", "TestA/x"),
                       ("pass", "TestA/x"), ("pass", None))
    results, notes = gotest.parse_run(lost_end)
    assert [(r.test_id, r.outcome) for r in results] == [("m/p::TestA", "passed"), ("m/p::TestA/x", "passed")]
    assert notes == ["1 failed result(s) overridden by the runner's own verdict (package ok, or a parent test "
                     "whose own end passed; a real failure fails both): m/p::TestA"]
    failed_package = lost_end.replace('"Action": "pass", "Package": "m/p"}', '"Action": "fail", "Package": "m/p"}')
    assert ("m/p::TestA", "error") in [(r.test_id, r.outcome) for r in gotest.parse(failed_package)]
    report = _stream(("run", "TestReport"), ("fail", "TestReport"), ("run", "TestA"), ("pass", "TestA"),
                     ("pass", None))  # TestMain's own suite, before any test: ended failing, still dropped
    assert [r.test_id for r in gotest.parse(report)] == ["m/p::TestA"]
