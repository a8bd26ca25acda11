"""Node.js test output read per test: TAP (node:test, node-tap), the spec-like reporters (mocha, jest,
vitest, node:test's spec), summary lines (uvu), deselections and exits no failing test explains."""
from __future__ import annotations

from pathlib import Path

from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.spec import Deselection
from envs.testrun import is_registered, run_tests
from envs.testrun.node_runner import parse_node_output, parse_node_summary

DATA = Path(__file__).parent / "data"
TAP = (DATA / "node_test_tap.txt").read_text()
"""Captured: node:test's TAP (Node 20.19) in tests/fixtures/repos/node_package."""
SPEC = (DATA / "node_test_spec.txt").read_text()
"""Captured: node:test's spec reporter (Node 20.19) in tests/fixtures/repos/node_lockfile."""
JEST_DETAILS = (DATA / "jest_verbose_failures_console.txt").read_text()
"""Captured: jest 29.7 --verbose (Node 20) in tests/fixtures/repos/node_jest with three bugs put into
lib/numbers.js and a file whose tests print (`- one`, `✓ fake pass`): failure details with diffs after the
first file's tests, console output before the second file's header."""

NODE_TAP = """TAP version 13
# Subtest: test/range.js
    # Subtest: intersects
        ok 1 - >=1.0.0 intersects 1.x
        not ok 2 - <1.0.0 intersects 2.x
          ---
          found: true
          wanted: false
          ...
        1..2
    not ok 1 - intersects # time=12.3ms
    ok 2 - trivial
    1..2
not ok 1 - test/range.js # time=80ms
# Subtest: test/crash.js
    1..0
not ok 2 - test/crash.js # time=5ms
  ---
  exitCode: 1
  ...
ok 3 - test/skip.js # SKIP no windows here
1..3
"""
MOCHA = """
> mime-types@3.0.1 test
> mocha --reporter spec test/test.js



  mimeTypes
    .charset(type)
      ✔ should return "UTF-8" for "application/json"
      ✔ should return false for unknown types
    .contentType(extension)
      1) should return content-type for "html"
      - should handle a pending case


  2 passing (13ms)
  1 pending
  1 failing

  1) mimeTypes
       .contentType(extension)
         should return content-type for "html":
     AssertionError: expected 'a' to equal 'b'
      ✔ not a test, the failure details echo output
"""
JEST = """PASS test/sum.test.js
  sum
    ✓ adds 1 + 2 to equal 3 (3 ms)
    ○ skipped works with strings
FAIL test/div.test.js
  divide
    ✕ by zero (5 ms)

  ● divide › by zero

Tests:       1 failed, 1 skipped, 1 passed, 3 total
"""
VITEST = """
 RUN  v3.0.5 /workspace

 ✓ src/index.spec.ts > path-to-regexp > parse > should parse simple 2ms
 × src/index.spec.ts > path-to-regexp > compile > fails 1ms
 ↓ src/index.spec.ts > path-to-regexp > skipped one

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed | 1 skipped (3)
"""
VITEST_DEFAULT = """
 ✓ src/cases.spec.ts (376 tests) 120ms
 ❯ src/redos.spec.ts (3 tests | 1 failed) 36654ms
   ✓ redos > / - /^(?:\\/)(?:\\/$)?$/i  707ms
   × redos > /:foo{abc:bar} - /abc/i 10064ms
     → Test timed out in 10000ms.
If this is a long-running test, pass a timeout value as the last argument or configure it globally.
   ✓ redos > /test - /^(?:\\/test)(?:\\/$)?$/i 949ms

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 378 passed (379)
"""
"""vitest 3's default reporter (captured from pillarjs/path-to-regexp, shortened): tests named only in
failing files."""
UVU = """colors.js
• • • • • • • • • •   (10 / 10)
index.js
• • • ✘   (3 / 4)
env.js
✘ •   (1 / 2)

  Total:     16
  Passed:    14
  Skipped:   0
  Duration:  4.12ms
"""


def _outcomes(output: str) -> dict[str, str]:
    return {r.test_id: r.outcome for r in parse_node_output(output)}


def test_node_test_tap_and_spec_name_every_leaf_under_its_suites() -> None:
    assert _outcomes(TAP) == {"add > small numbers": "passed", "add > negative numbers": "passed",
                              "slugify > spaces": "passed", "slugify > punctuation": "passed",
                              "unicode slugs": "skipped"}
    assert _outcomes(SPEC) == {"timeout > reads seconds": "passed", "timeout > reads minutes": "passed",
                               "timeout > hours > reads hours": "passed"}
    assert parse_node_summary(TAP)["passed"] == 6  # node counts suites as tests: per-test results win


def test_node_tap_files_suites_failures_and_a_crashed_file() -> None:
    results = {r.test_id: r for r in parse_node_output(NODE_TAP)}
    assert {k: r.outcome for k, r in results.items()} == {
        "test/range.js > intersects > >=1.0.0 intersects 1.x": "passed",
        "test/range.js > intersects > <1.0.0 intersects 2.x": "failed",
        "test/range.js > trivial": "passed", "test/crash.js": "failed", "test/skip.js": "skipped"}
    assert "wanted: false" in results["test/range.js > intersects > <1.0.0 intersects 2.x"].message
    assert "exitCode: 1" in results["test/crash.js"].message


def test_mocha_jest_and_vitest_marks() -> None:
    assert _outcomes(MOCHA) == {
        'mimeTypes > .charset(type) > should return "UTF-8" for "application/json"': "passed",
        "mimeTypes > .charset(type) > should return false for unknown types": "passed",
        'mimeTypes > .contentType(extension) > should return content-type for "html"': "failed",
        "mimeTypes > .contentType(extension) > should handle a pending case": "skipped"}
    assert _outcomes(JEST) == {"test/sum.test.js > sum > adds 1 + 2 to equal 3": "passed",
                               "test/sum.test.js > sum > works with strings": "skipped",  # jest: `○ skipped name`
                               "test/div.test.js > divide > by zero": "failed"}
    assert _outcomes(VITEST) == {
        "src/index.spec.ts > path-to-regexp > parse > should parse simple": "passed",
        "src/index.spec.ts > path-to-regexp > compile > fails": "failed",
        "src/index.spec.ts > path-to-regexp > skipped one": "skipped"}


def test_jest_failure_details_and_console_output_name_no_test() -> None:
    assert _outcomes(JEST_DETAILS) == {
        "lib/numbers.test.js > stats of a list": "passed", "lib/numbers.test.js > stats of a stream": "skipped",
        "lib/numbers.test.js > clamp > keeps a value inside the bounds": "passed",
        "lib/numbers.test.js > clamp > raises a value below the low bound": "failed",
        "lib/numbers.test.js > clamp > lowers a value above the high bound": "passed",
        "lib/numbers.test.js > range > counts up to the end, not including it": "failed",
        "lib/numbers.test.js > range > takes a step": "failed",
        "lib/console.test.js > logs a list": "passed", "lib/console.test.js > outer > inner logs": "passed"}
    printed_first = JEST_DETAILS[JEST_DETAILS.index("  console.log\n"):]  # one file: its console comes first
    assert _outcomes(printed_first) == {"lib/console.test.js > logs a list": "passed",
                                        "lib/console.test.js > outer > inner logs": "passed"}
    assert parse_node_summary(JEST_DETAILS) == {"passed": 5, "failed": 3, "error": 0, "skipped": 1}
    mocha = "  console.log\n    ✔ prints a line\n    - prints colours\n\n  1 passing (2ms)\n  1 pending\n"
    assert _outcomes(mocha) == {"console.log > prints a line": "passed",  # no jest header: a suite's name
                                "console.log > prints colours": "skipped"}


def test_vitest_default_reporter_names_failing_files_tests_so_counts_come_from_its_summary() -> None:
    assert _outcomes(VITEST_DEFAULT) == {
        "src/redos.spec.ts > redos > / - /^(?:\\/)(?:\\/$)?$/i": "passed",
        "src/redos.spec.ts > redos > /:foo{abc:bar} - /abc/i": "failed",
        "src/redos.spec.ts > redos > /test - /^(?:\\/test)(?:\\/$)?$/i": "passed"}
    box = FakeSandbox(rules=[("npm test", ExecResult(exit_code=1, stdout=VITEST_DEFAULT))]).start()
    run = run_tests(box, "npm test", "node", [], 60)
    assert (run.counts["passed"], run.counts["failed"], run.results) == (378, 1, [])  # judged on all 379


def test_summaries_when_nothing_is_named_per_test() -> None:
    assert parse_node_output(UVU) == []
    assert parse_node_summary(UVU) == {"passed": 14, "failed": 2, "error": 0, "skipped": 0}
    assert parse_node_summary(JEST) == {"passed": 1, "failed": 1, "error": 0, "skipped": 1}
    assert parse_node_summary(MOCHA) == {"passed": 2, "failed": 1, "error": 0, "skipped": 1}
    assert parse_node_summary("Started\n..F*\n\n4 specs, 1 failure, 1 pending spec\nFinished in 0.01 seconds") == {
        "passed": 2, "failed": 1, "error": 0, "skipped": 1}  # jasmine
    assert parse_node_summary(VITEST) == {"passed": 1, "failed": 1, "error": 0, "skipped": 1}


def test_run_reads_results_records_deselections_and_unexplained_exits() -> None:
    assert is_registered("node")
    box = FakeSandbox(rules=[("npm test", ExecResult(exit_code=1, stdout=TAP.replace(
        "ok 2 - punctuation", "not ok 2 - punctuation", 1)))]).start()
    run = run_tests(box, "npm test --ignore-scripts", "node",
                    [Deselection(test="slugify", reason="needs the internet")], 60)
    assert run.counts == {"passed": 2, "failed": 0, "error": 0, "skipped": 3} and run.collection_ok
    assert next(r for r in run.results if r.test_id == "slugify > punctuation").message.startswith("deselected")
    box = FakeSandbox(rules=[("npm test", ExecResult(exit_code=1, stdout=TAP + "\nlint: 3 problems"))]).start()
    run = run_tests(box, "npm test", "node", [], 60)
    assert (run.passed, run.counts["error"]) == (4, 1) and run.results[-1].test_id == "<npm test>"
    box = FakeSandbox(rules=[("npx uvu", ExecResult(exit_code=0, stdout=UVU.replace("14", "16")))]).start()
    run = run_tests(box, "npx uvu", "node", [], 60)
    assert (run.passed, run.ran, run.results) == (16, 16, [])
    box = FakeSandbox(rules=[("npm test", ExecResult(exit_code=1, stderr="sh: 1: mocha: not found"))]).start()
    run = run_tests(box, "npm test", "node", [], 60)
    assert not run.collection_ok or run.passed == 0
