"""Hangs and uncollectable files: read from pytest's output, left out by the install loop with their reason,
counted against the cap by verification; a verification that runs out of time is `verify_timeout`."""
from pathlib import Path

from autoinstall.verify.checks import check_command, with_ran, with_uncollected
from autoinstall.verify.verdict import judge_spec
from envs.base import ExecResult
from envs.spec import (
    Check,
    Collection,
    Deselection,
    EnvSpec,
    Plan,
    SourceRecord,
    TestResult,
    TestRun,
    Verification,
)
from envs.testrun import collection_errors, hung_tests
from tests.autoinstall.test_install_loop import OK, PASSING, install, junit

COLLECT_OUTPUT = """
______________________ ERROR collecting tests/test_bad.py ______________________
ImportError while importing test module '/src/tests/test_bad.py'.
Traceback:
tests/test_bad.py:1: in <module>
    import nobody_has_this
E   ModuleNotFoundError: No module named 'nobody_has_this'
_________________ ERROR collecting tests/test_py2.py _________________
E     File "/src/tests/test_py2.py", line 5
E       print "x"
E   SyntaxError: Missing parentheses in call to 'print'
__________________ ERROR collecting tests/conftest.py __________________
E   ImportError: no
=========================== short test summary info ============================
ERROR tests/test_bad.py
ERROR tests/test_py2.py
ERROR tests/test_old.py - AttributeError: module 'x' has no attribute 'y'
!!!!!!!!!!!!!!!!!!! Interrupted: 3 errors during collection !!!!!!!!!!!!!!!!!!!!
40 tests collected, 3 errors in 0.24s
"""


def test_collection_errors_name_each_file_with_its_first_line() -> None:
    assert collection_errors(COLLECT_OUTPUT) == {
        "tests/test_bad.py": "ModuleNotFoundError: No module named 'nobody_has_this'",
        "tests/test_py2.py": "SyntaxError: Missing parentheses in call to 'print'",
        "tests/test_old.py": "AttributeError: module 'x' has no attribute 'y'",
    }  # conftest.py is never left out: every test below it depends on it
    assert collection_errors("ERROR tests/test_a.py\n") == {"tests/test_a.py": "the module failed to import"}
    assert collection_errors("1 passed in 0.1s\n") == {}


def test_hung_tests_from_results_and_from_the_watchdog_line() -> None:
    run = TestRun(exit_code=1, results=[
        TestResult(test_id="t.py::a", outcome="failed", message="Failed: autoinstall-timeout: t.py::a ran over 5 s"),
        TestResult(test_id="t.py::b", outcome="failed", message="assert 1 == 2"),
        TestResult(test_id="t.py::c", outcome="failed", message="Failed: Timeout (>3.0s) from pytest-timeout.")])
    assert hung_tests(run) == {"t.py::a": "ran over 5 s (the per-test timeout) and was stopped",
                               "t.py::c": "ran over 3.0 s (the project's pytest-timeout)"}
    killed = TestRun(exit_code=86, output_tail="...\nautoinstall-timeout: t.py::c ran over 2.5 s (the per-test "
                                                "timeout) and did not stop: the session ends here\n")
    assert list(hung_tests(killed)) == ["t.py::c"]


def test_the_collect_check_leaves_out_what_the_run_leaves_out() -> None:
    collect = Check(name="collect tests", kind="collect", command="python -m pytest --collect-only -q tests")
    left = [Deselection(test="tests/test_py2.py", reason="collection_error: x"),
            Deselection(test="tests/test_a.py::test_b", reason="hangs: y")]
    assert check_command(collect, left, "pytest") == (collect.command + " --ignore=tests/test_py2.py "
                                            "--deselect=tests/test_a.py::test_b")
    assert check_command(collect, [], "pytest") == collect.command
    imports = Check(name="import x", kind="import", command="python -c 'import x'")
    assert check_command(imports, left, "pytest") == imports.command


def test_uncollected_tests_count_against_the_cap() -> None:
    left = [Deselection(test="tests/test_py2.py", reason="collection_error: x", uncollected=3),
            Deselection(test="tests/test_a.py::test_b", reason="hangs: y")]
    counted = with_uncollected(Collection(default=40, command=40, selected=39), left)
    assert (counted.suite, counted.selected, counted.deselected) == (43, 39, 4)
    assert "3 tests in 1 files or modules that cannot be collected or built here" in counted.notes[0]
    assert with_uncollected(Collection(command=10, selected=10), left[1:]).command == 10


def test_a_listing_that_counted_fewer_tests_than_ran_is_raised_to_what_ran() -> None:
    ran = {"passed": 1472, "failed": 0, "error": 0, "skipped": 2, "flaky": 0}
    raised = with_ran(Collection(default=1100, command=1090, selected=1080), ran)
    assert raised is not None
    assert (raised.selected, raised.command, raised.default, raised.deselected) == (1474, 1484, 1494, 10)
    assert "394 more tests ran" in raised.notes[0]
    kept = with_ran(Collection(command=50, selected=50), {"passed": 40, "skipped": 2})
    assert kept is not None and (kept.selected, kept.notes) == (50, [])


def test_a_verification_that_runs_out_of_time_is_verify_timeout() -> None:
    spec = EnvSpec(status="failed", model="embedded", source=SourceRecord(repo="r", name="r", commit="c"),
                   plan=Plan(test_command="python -m pytest"))
    run = TestRun(exit_code=124, timed_out=True, duration_s=900, output_tail="...")
    judge_spec(spec, Verification(verified=False, reason="the test run hit its timeout", runs=[run]))
    assert spec.failure is not None and spec.failure.failure_class == "verify_timeout"


def test_the_loop_deselects_a_hanging_test_with_reason_hangs_and_runs_again() -> None:
    hanging = junit(("test_a::test_one", ""), ("test_a::test_two", "Failed: autoinstall-timeout: "
                                                                   "tests/test_a.py::test_two ran over 5 s"))
    runs: list[str] = []

    def behaviour(sb, cmd: str, env: dict):  # noqa: ANN001, ANN202
        if "pytest" in cmd and "--junitxml" in cmd:
            runs.append(cmd)
            assert env["AUTOINSTALL_TEST_TIMEOUT"] == "5"
            return PASSING if "--deselect=tests/test_a.py::test_two" in cmd else hanging
        return OK

    result, _ = install(behaviour, per_test_timeout_s=5)
    assert result.ok, result.failure
    assert [(d.test, d.reason) for d in result.deselected] == [
        ("tests/test_a.py::test_two", "hangs: ran over 5 s (the per-test timeout) and was stopped")]
    assert len(set(runs)) == 2 and all("-p autoinstall_timeout" in c for c in runs)  # World asks twice per exec
    assert result.repairs[-1].kind == "deselect"


def test_the_loop_leaves_out_the_test_the_process_crashed_in_and_runs_again() -> None:
    crashes: list[str] = []

    def behaviour(sb, cmd: str, env: dict):  # noqa: ANN001, ANN202
        if cmd.startswith("head -c 4096 ") and cmd.endswith("/current-test"):  # the plugin's record of the test
            return ExecResult(exit_code=0, stdout="tests/test_a.py::test_two")
        if "pytest" in cmd and "--junitxml" in cmd:
            assert "AUTOINSTALL_CURRENT_TEST=" in cmd
            if "--deselect=tests/test_a.py::test_two" in cmd:
                return junit(("test_a::test_one", ""))
            crashes.append(cmd)
            return ExecResult(exit_code=139, stderr="Fatal Python error: Segmentation fault\n")
        return OK

    result, _ = install(behaviour)
    assert result.ok, result.failure
    assert crashes and [(d.test, d.reason.split(" (")[0]) for d in result.deselected] == [
        ("tests/test_a.py::test_two", "crashes: the test process died with SIGSEGV")]
    assert result.repairs[-1].kind == "deselect"


def test_the_loop_leaves_out_a_file_that_no_repair_lets_collect(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_py2.py").write_text("def test_a():\n    print 'x'\ndef test_b():\n    pass\n")
    broken = ("_____ ERROR collecting tests/test_py2.py _____\nE   SyntaxError: Missing parentheses in call to "
              "'print'\nERROR tests/test_py2.py\n!!! Interrupted: 1 error during collection !!!\n")

    def behaviour(sb, cmd: str, env: dict):  # noqa: ANN001, ANN202
        ignored = "--ignore=tests/test_py2.py" in cmd
        if "--collect-only" in cmd:
            return ExecResult(exit_code=0, stdout="12 tests collected in 0.1s\n") if ignored else ExecResult(
                exit_code=2, stdout=broken + "12 tests collected, 1 error in 0.1s\n")
        if "--junitxml" in cmd:
            return PASSING if ignored else ExecResult(exit_code=2, stdout=broken + "1 error in 0.1s\n")
        return OK

    result, _ = install(behaviour, tmp=tmp_path)
    assert result.ok, result.failure
    [left] = result.deselected
    assert (left.test, left.uncollected) == ("tests/test_py2.py", 2)
    assert left.reason == "collection_error: SyntaxError: Missing parentheses in call to 'print'"


def test_many_uncollectable_files_still_fail_the_build(tmp_path: Path) -> None:
    broken = "".join(f"ERROR tests/test_{i}.py - ImportError: x\n" for i in range(8))

    def behaviour(sb, cmd: str, env: dict):  # noqa: ANN001, ANN202
        if "--collect-only" in cmd or "--junitxml" in cmd:
            return ExecResult(exit_code=2, stdout=broken + "3 tests collected, 8 errors in 0.1s\n")
        return OK

    result, _ = install(behaviour, tmp=tmp_path)
    assert not result.ok and result.deselected == []
    assert result.failure is not None and result.failure.failure_class == "collection_failed"
