from autoinstall.verify import judge_spec
from autoinstall.verify.checks import (
    combine,
    crash_signal,
    flaky_tests,
    judge,
    narrow_suite,
    partial_reasons,
    pass_rate,
    run_failure_class,
    verify,
)
from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.spec import Collection, Deselection, EnvSpec, Plan, SourceRecord, TestResult, TestRun, Verification
from envs.testrun import collect_count, count, parse_junit, parse_summary, pytest_args, run_tests

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
    assert judge([], [_run(0, 1)], 0.9) == (False, "no test passed")
    assert judge([], [_run(0, 0)], 0.9) == (False, "the test command reported no test at all (exit 0; it "
                                                   "printed nothing)")
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


def test_a_suite_that_ran_out_of_processes_fails_as_pids_limit_and_names_the_option() -> None:
    starved = TestRun(exit_code=1, counts={"passed": 2, "failed": 5}, forks_refused=40)
    passing = TestRun(exit_code=0, counts={"passed": 7}, forks_refused=40)  # a suite that survives its fork bomb
    assert run_failure_class(starved) == "pids_limit"
    ok, reason = judge([], [starved], 0.9)
    assert not ok and "40 process creations were refused" in reason and "--pids" in reason
    assert judge([], [passing], 0.9) == (True, "7/7 tests passed")


def _outcomes(*outcomes: tuple[str, str]) -> TestRun:
    results = [TestResult(test_id=t, outcome=o) for t, o in outcomes]  # type: ignore[arg-type]
    return TestRun(exit_code=0, results=results, counts=count(results))


def test_a_test_passes_only_when_it_passed_in_every_outcomes() -> None:
    first = _outcomes(("t::a", "passed"), ("t::b", "passed"), ("t::c", "failed"), ("t::d", "skipped"), ("t::e", "passed"))
    second = _outcomes(("t::a", "passed"), ("t::b", "failed"), ("t::c", "failed"), ("t::d", "skipped"))
    assert combine([first, second]) == {"passed": 1, "failed": 1, "error": 1, "skipped": 1, "flaky": 1}
    assert pass_rate(combine([first, second])) == 0.25  # a; over a, b (flaky), c, e (missing from run 2)
    assert judge([], [first, second], 0.2) == (True, "1/4 tests passed in every run")
    assert judge([], [first, second], 0.9)[0] is False


def test_summary_only_runners_count_the_fewest_passes() -> None:
    runs = [TestRun(exit_code=0, counts={"passed": 10, "failed": 0}), TestRun(exit_code=1, counts={"passed": 9, "failed": 1})]
    assert combine(runs)["passed"] == 9 and combine(runs)["failed"] == 1
    assert combine(runs[::-1])["passed"] == 9 and combine(runs[::-1])["failed"] == 1


def test_a_command_narrower_than_the_suite_and_too_much_deselection_are_caught() -> None:
    side = Collection(default=140, command=23, selected=23)
    assert "23 of the 140" in narrow_suite(side, 0.05)
    assert judge([], [_outcomes(("b::x", "passed"))], 0.9, side)[0] is True  # it runs: partial, not failed
    gutted = Collection(default=835, command=835, selected=139)
    assert narrow_suite(gutted, 0.05) == ""
    assert partial_reasons(gutted, 0.05) == ["696 of 835 tests (83%) are deselected, over the cap of 5% (--max-deselected)"]
    assert partial_reasons(Collection(default=100, command=100, selected=96), 0.05) == []
    assert partial_reasons(None, 0.05) == []


def test_collect_count_reads_pytest_collect_only_lines() -> None:
    sandbox = FakeSandbox(rules=[
        (r"^python -m pytest tests .*--deselect", "tests/test_a.py::x\n\n139/835 tests collected (696 deselected) in 0.3s\n"),
        (r"^python -m pytest tests ", "835 tests collected in 0.3s\n"),
        (r"^python -m pytest -o addopts=-v ", "collected 786 items\n\n===== 786 tests collected in 0.42s =====\n"),
        (r"^python -m pytest ", "no tests collected in 0.01s\n"),
        (r"^broken ", ExecResult(exit_code=4, stderr="ERROR: usage")),
    ]).start()
    picked = [Deselection(test="tests/test_a.py::x[1-2]", reason="r")]
    assert collect_count(sandbox, "python -m pytest tests", [], 60) == (835, "")
    assert collect_count(sandbox, "python -m pytest tests", picked, 60) == (139, "")
    assert "'--deselect=tests/test_a.py::x[1-2]'" in sandbox.commands()[-2]  # then its scratch cache is removed
    assert collect_count(sandbox, "python -m pytest", [], 60) == (0, "")
    assert collect_count(sandbox, "python -m pytest -o addopts=-v", [], 60) == (786, "")  # verbose again: framed
    count_, note = collect_count(sandbox, "broken", [], 60)
    assert count_ is None and "exit 4" in note and "ERROR: usage" in note


def test_a_passing_suite_with_too_much_deselected_is_partial_not_verified() -> None:
    run = _outcomes(("t::a", "passed"))
    spec = EnvSpec(status="failed", source=SourceRecord(repo="r", name="r"), model="embedded",
                   plan=Plan(test_command="python -m pytest"))
    gutted = Verification(verified=True, runs=[run, run], collection=Collection(default=835, command=835,
                                                                                 selected=139))
    judge_spec(spec, gutted)
    assert spec.status == "partial" and spec.failure is not None
    assert spec.failure.failure_class == "deselection_cap" and "696 of 835" in spec.failure.message
    whole = Verification(verified=True, runs=[run, run], collection=Collection(default=835, command=835,
                                                                                selected=835))
    judge_spec(spec, whole)
    assert spec.status == "verified" and spec.failure is None


def test_a_custom_runner_that_exits_non_zero_has_failed_whatever_its_summary_says() -> None:
    clean = FakeSandbox(rules=[(r"^python -m testtools.run", "Ran 12 tests in 0.1s\n\nOK\n")]).start()
    assert run_tests(clean, "python -m testtools.run tests", "unittest", [], 60).counts["error"] == 0
    lying = FakeSandbox(rules=[(r"^python -m testtools.run", ExecResult(exit_code=1, stdout="Ran 12 tests in 0.1s\n\nOK\n"))]).start()
    run = run_tests(lying, "python -m testtools.run tests", "unittest", [], 60)
    assert (run.counts["passed"], run.counts["error"]) == (12, 1)


def test_a_suite_that_reports_no_test_gets_a_recorded_reason() -> None:
    silent = TestRun(exit_code=0, output_tail="", counts=parse_summary(""))
    empty = TestRun(exit_code=5, output_tail="\nno tests ran in 0.01s\n", counts=parse_summary("no tests ran"))
    assert run_failure_class(silent) == run_failure_class(empty) == "collection_failed"
    nothing = Collection(command=None, notes=["`python -m pytest --collect-only` printed no count (exit 0): "
                                              "(no output)"])
    ok, reason = judge([], [silent, silent], 0.9, nothing)
    assert not ok and reason == ("the test command reported no test at all (exit 0; it printed nothing) "
                                 "(`python -m pytest --collect-only` printed no count (exit 0): (no output))")
    assert judge([], [empty], 0.9, Collection(default=0, command=0, selected=0))[1] == (
        "the test command reported no test at all (exit 5; its last line: 'no tests ran in 0.01s'): "
        "the suite collects no tests")
    assert judge([], [empty], 0.9, Collection(default=12, command=12, selected=0))[1].endswith(
        "every one of its 12 tests is deselected")
    spec = EnvSpec(status="failed", source=SourceRecord(repo="r", name="r"), model="embedded",
                   plan=Plan(test_command="python run_tests.py", test_runner="custom"))
    judge_spec(spec, Verification(verified=False, reason=reason, runs=[silent, silent], collection=nothing))
    assert spec.failure is not None and spec.failure.failure_class == "collection_failed"
    assert "printed nothing" in spec.failure.message


def _crashing_suite(crashes: int) -> FakeSandbox:
    """A unittest suite whose first `crashes` runs die on SIGSEGV (exit 139) before reporting any test."""
    runs = {"n": 0}

    def behaviour(sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
        if not cmd.startswith("python -m unittest -v"):
            return None
        runs["n"] += 1
        if runs["n"] <= crashes:
            return ExecResult(exit_code=139, stderr="Segmentation fault (core dumped)\n")
        return ExecResult(exit_code=0, stderr="test_a (t.T.test_a) ... ok\n\nRan 1 test in 0.1s\n\nOK\n")

    return FakeSandbox(behaviour=behaviour).start()


def test_a_run_that_crashes_before_reporting_is_run_again_once_and_recorded() -> None:
    plan = Plan(test_command="python -m unittest -v", test_runner="unittest")
    once = verify(_crashing_suite(1), plan, [], runs=2)
    assert once.verified and len(once.runs) == 2
    assert [r.exit_code for r in once.crashed_runs] == [139]
    assert "a run crashed with SIGSEGV before reporting a test and was run again" in once.reason
    twice = verify(_crashing_suite(2), plan, [], runs=2)
    assert not twice.verified and "crashed (SIGSEGV, exit 139)" in twice.reason
    spec = EnvSpec(status="failed", source=SourceRecord(repo="r", name="r"), model="embedded", plan=plan)
    judge_spec(spec, twice)
    assert spec.failure is not None and spec.failure.failure_class == "tests_crashed"
    killed = TestRun(exit_code=137, output_tail="Killed\n", counts=parse_summary(""))
    assert crash_signal(killed) is None  # SIGKILL is the OOM killer's or a timeout's, not a crash
