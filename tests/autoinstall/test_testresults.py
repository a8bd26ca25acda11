from autoinstall.verify.checks import flaky_tests, judge, run_failure_class
from envs.spec import Deselection, TestRun
from envs.testrun import count, parse_junit, parse_summary, pytest_args

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.test_a.TestX" name="test_b[1-2]" file="tests/test_a.py" line="3" time="0.01">
<failure message="assert 0">trace</failure></testcase>
<testcase classname="tests.test_a" name="test_c" file="tests/test_a.py" time="0.0"/>
<testcase classname="tests.test_a" name="test_s" file="tests/test_a.py" time="0.0"><skipped message="no"/></testcase>
<testcase classname="test_top" name="test_e" time="0.0"><error message="fixture"/></testcase>
</testsuite></testsuites>"""


def test_parse_junit_rebuilds_node_ids_and_outcomes() -> None:
    results = parse_junit(JUNIT)
    assert [(r.test_id, r.outcome) for r in results] == [
        ("tests/test_a.py::TestX::test_b[1-2]", "failed"),
        ("tests/test_a.py::test_c", "passed"),
        ("tests/test_a.py::test_s", "skipped"),
        ("test_top.py::test_e", "error"),
    ]
    assert results[0].message.startswith("assert 0")
    assert count(results) == {"passed": 1, "failed": 1, "error": 1, "skipped": 1}


def test_parse_summary_unittest_and_pytest() -> None:
    assert parse_summary("...\nRan 12 tests in 0.1s\n\nFAILED (failures=2, errors=1, skipped=1)\n") == {
        "passed": 8, "failed": 2, "error": 1, "skipped": 1}
    assert parse_summary("Ran 3 tests in 0.0s\n\nOK\n")["passed"] == 3
    assert parse_summary("==== 3 passed, 1 failed, 2 skipped in 0.2s ====") == {
        "passed": 3, "failed": 1, "error": 0, "skipped": 2}
    assert parse_summary("nothing here") == {"passed": 0, "failed": 0, "error": 0, "skipped": 0}


def _run(passed: int, failed: int, collection_ok: bool = True) -> TestRun:
    return TestRun(exit_code=0 if not failed else 1, counts={"passed": passed, "failed": failed},
                   collection_ok=collection_ok)


def test_judge_threshold_and_edge_cases() -> None:
    assert judge([], [_run(9, 1)], 0.9)[0] is True
    assert judge([], [_run(8, 2)], 0.9) == (False, "pass rate 0.80 below threshold 0.90")
    assert judge([], [_run(0, 0)], 0.9) == (False, "no test passed")
    assert judge([], [_run(5, 0, collection_ok=False)], 0.9)[1].startswith("test collection failed")
    assert judge([], [], 0.9) == (False, "no test command")


def test_flaky_tests_are_those_whose_outcome_changed() -> None:
    first = TestRun(exit_code=1, results=parse_junit(JUNIT))
    second = TestRun(exit_code=0, results=[r.model_copy(update={"outcome": "passed"}) for r in first.results])
    assert flaky_tests([first, second]) == ["test_top.py::test_e", "tests/test_a.py::TestX::test_b[1-2]",
                                            "tests/test_a.py::test_s"]
    assert flaky_tests([first, first]) == []


def test_pytest_args_deselect_node_ids_and_ignore_files() -> None:
    args = pytest_args([Deselection(test="tests/t.py::test_x[a b]", reason="r"),
                        Deselection(test="tests/test_db.py", reason="r")], "/tmp/j.xml")
    assert "'--deselect=tests/t.py::test_x[a b]'" in args
    assert "--ignore=tests/test_db.py" in args
    assert "--junitxml=/tmp/j.xml" in args


def test_inherited_tests_are_named_by_the_module_that_collected_them() -> None:
    xml = ('<testsuites><testsuite><testcase classname="tests.test_psycopg2_dbapi20.Psycopg2Tests" '
           'name="test_BINARY" file="tests/dbapi20.py" line="10" time="0"/></testsuite></testsuites>')
    assert parse_junit(xml)[0].test_id == "tests/test_psycopg2_dbapi20.py::Psycopg2Tests::test_BINARY"


def test_a_killed_or_timed_out_run_is_named_for_what_killed_it() -> None:
    oom = TestRun(exit_code=137, collection_ok=False, output_tail="Killed")
    timeout = TestRun(exit_code=124, collection_ok=False, timed_out=True, duration_s=900)
    broken = TestRun(exit_code=2, collection_ok=False)
    failing = TestRun(exit_code=1, counts={"passed": 1, "failed": 3})
    assert [run_failure_class(r) for r in (oom, timeout, broken, failing)] == [
        "memory_limit", "tests_timeout", "collection_failed", "tests_failing"]
    assert "memory limit" in judge([], [oom], 0.9)[1] and "--memory-mb" in judge([], [oom], 0.9)[1]
    assert "timeout after 900 s" in judge([], [timeout], 0.9)[1]
