"""The grader's verdict (envs/grading/kit/verdict.py): a selected test is credited only by its exact id, passed
every time it appears, and only when the runner's exit status and its own summary agree with its results."""
from __future__ import annotations

import json

from envs.grading.kit.verdict import judge

SEL = ["tests/test_calc.py::test_sub", "tests/test_calc.py::test_add"]


def junit(*cases: tuple[str, str]) -> str:
    body = "".join(f'<testcase classname="tests.test_calc" name="{n}" file="tests/test_calc.py">'
                   + ("<failure message='x'/>" if o == "failed" else "") + "</testcase>" for n, o in cases)
    return f'==> /r/junit.xml <==\n<?xml version="1.0"?><testsuites><testsuite>{body}</testsuite></testsuites>'


def test_pytest_all_passed_with_a_matching_summary_is_1() -> None:
    v = judge("junit", "== 2 passed in 0.1s ==\n", junit(("test_sub", "passed"), ("test_add", "passed")), 0, False, SEL)
    assert v.reward == 1.0 and v.tests == dict.fromkeys(SEL, "passed")


def test_a_report_that_contradicts_the_run_is_not_trusted() -> None:
    report = junit(("test_sub", "passed"), ("test_add", "passed"))
    assert judge("junit", "== 1 failed, 1 passed in 0.1s ==\n", report, 1, False, SEL).reward == 0.0
    assert judge("junit", "== 2 passed in 0.1s ==\n", report, 1, False, SEL).reward == 0.0  # the exit says a failure
    assert judge("junit", "", report, 0, True, SEL).reward == 0.0  # timed out
    assert judge("junit", "", "", 0, False, SEL).tests == dict.fromkeys(SEL, "missing")
    failing = junit(("test_sub", "failed"), ("test_add", "passed"))
    assert "exited 0 although" in judge("junit", "", failing, 0, False, SEL).problems[0]


def test_a_test_missing_from_the_report_fails() -> None:
    v = judge("junit", "1 passed in 0.1s\n", junit(("test_add", "passed")), 0, False, SEL)
    assert v.reward == 0.0 and v.tests["tests/test_calc.py::test_sub"] == "missing"


def test_go_package_verdicts_must_agree_with_its_tests() -> None:
    def event(**e: object) -> str:
        return json.dumps(e) + "\n"
    ok = event(Action="pass", Package="m/p", Test="TestA") + event(Action="pass", Package="m/p")
    assert judge("gotest", ok, "", 0, False, ["m/p::TestA"]).reward == 1.0
    lying = event(Action="pass", Package="m/p", Test="TestA") + event(Action="fail", Package="m/p")
    assert judge("gotest", lying, "", 1, False, ["m/p::TestA"]).reward == 0.0
    cut = event(Action="pass", Package="m/p", Test="TestA")  # no package end: the binary died or exited early
    assert judge("gotest", cut, "", 0, False, ["m/p::TestA"]).reward == 0.0


def test_libtest_fake_lines_are_caught_by_duplicates_and_totals() -> None:
    real = ("     Running unittests src/lib.rs (target/debug/deps/calc-0123456789abcdef)\n"
            "test tests::subs ... FAILED\n\nfailures:\n\n---- tests::subs stdout ----\n"
            "test tests::subs ... ok\n\nfailures:\n    tests::subs\n\n"
            "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n")
    v = judge("libtest", real, "", 101, False, ["calc-lib::tests::subs"])
    assert v.reward == 0.0 and v.tests["calc-lib::tests::subs"] == "failed"  # a line in its own output is no result
    printed = real.replace("test tests::subs ... FAILED\n", "test tests::subs ... ok\ntest tests::subs ... FAILED\n")
    assert judge("libtest", printed, "", 101, False, ["calc-lib::tests::subs"]).tests["calc-lib::tests::subs"] == "ambiguous"
    forged = printed.replace("test tests::subs ... FAILED\n", "").replace("FAILED. 0 passed; 1 failed", "ok. 0 passed; 1 failed")
    assert judge("libtest", forged, "", 0, False, ["calc-lib::tests::subs"]).reward == 0.0  # totals disagree


def test_node_a_printed_pass_before_the_real_failure_does_not_credit_the_test() -> None:
    out = ("  calc\n    ✓ subtracts\n    1) subtracts\n\n  1 passing (3ms)\n  1 failing\n")
    v = judge("node", out, "", 1, False, ["calc > subtracts"])
    assert v.reward == 0.0 and v.tests["calc > subtracts"] in ("ambiguous", "failed")


def test_surefire_reports_and_maven_totals() -> None:
    report = ('==> target/surefire-reports/TEST-a.CalcTest.xml <==\n<testsuite name="a.CalcTest">'
              '<testcase classname="a.CalcTest" name="subs"/></testsuite>')
    assert judge("surefire", "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n", report, 0, False,
                 ["a.CalcTest#subs"]).reward == 1.0
    assert judge("surefire", "[ERROR] Tests run: 1, Failures: 1, Errors: 0, Skipped: 0\n", report, 1, False,
                 ["a.CalcTest#subs"]).reward == 0.0


NODE_FORGED = """TAP version 13
# Subtest: add
    # Subtest: negative numbers
    ok 1 - negative numbers
      ---
      duration_ms: 0.3
      ...
    1..1
ok 1 - add
  ---
  duration_ms: 31.9
  ...
# Error: cheat
#     at Object.<anonymous> (/workspace/lib/index.js:15:9)
# Subtest: /workspace/test/index.test.js
not ok 2 - /workspace/test/index.test.js
  ---
  duration_ms: 819.8
  location: '/workspace/test/index.test.js:1:1'
  failureType: 'testCodeFailure'
  exitCode: 1
  signal: ~
  error: 'test failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..2
# tests 2
# pass 1
# fail 1
"""
"""node:test's report of a test file whose child wrote a recorded passing run to its channel and then ended with an
error before its tests ran: the runner lists the replayed passes and, apart, the file's failure (its exit 1)."""


def test_node_a_test_file_whose_process_ended_abnormally_credits_nothing() -> None:
    v = judge("node", NODE_FORGED, "", 1, False, ["add > negative numbers"])
    assert v.tests == {"add > negative numbers": "passed"}  # what the process said...
    assert v.reward == 0.0 and any("ended abnormally (exit 1)" in p for p in v.problems)  # ...is not trusted
    killed = NODE_FORGED.replace("exitCode: 1", "exitCode: ~").replace("signal: ~", "signal: 'SIGKILL'")
    assert "ended abnormally (SIGKILL)" in " ".join(judge("node", killed, "", 1, False, ["add > negative numbers"]).problems)
    spec = ("✔ add > negative numbers (0.3ms)\n✖ /workspace/test/index.test.js (819.8ms)\n  'test failed'\n\n"
            "✖ failing tests:\n\n✖ /workspace/test/index.test.js (819.8ms)\n  [Error [ERR_TEST_FAILURE]: test failed] {\n"
            "    code: 'ERR_TEST_FAILURE',\n    failureType: 'testCodeFailure',\n    cause: 'test failed',\n"
            "    exitCode: 1,\n    signal: null\n  }\nℹ pass 1\nℹ fail 1\n")
    assert "ended abnormally (exit 1)" in " ".join(judge("node", spec, "", 1, False, ["add > negative numbers"]).problems)


def test_node_a_test_that_failed_on_its_own_is_no_dead_process() -> None:
    out = NODE_FORGED.replace("not ok 2 - /workspace/test/index.test.js", "not ok 2 - subtracts").replace(
        "  exitCode: 1\n  signal: ~\n", "")
    v = judge("node", out, "", 1, False, ["add > negative numbers"])
    assert v.reward == 1.0 and not v.problems
