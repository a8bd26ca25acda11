"""unittest-style runners: real `python -m unittest` runs in a local sandbox give one result per test."""
import os
import sys
from pathlib import Path

from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.local import LocalSandbox
from envs.runtime.reward import run_reward
from envs.runtime.spec import RuntimeSpec
from envs.spec import Deselection
from envs.testrun import collect_count, collects, run_tests
from envs.testrun.unittest_runner import (
    EXIT_STATUS_ID,
    deselects,
    list_command,
    listing_check,
    parse_unittest_verbose,
    verbose_command,
)

PY = sys.executable
TEST_A = '''import unittest


class T(unittest.TestCase):
    def test_ok(self):
        print("output of the test")

    def test_doc(self):
        """A docstring line."""

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_err(self):
        raise ValueError("boom")

    @unittest.skip("no network")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xfail(self):
        self.fail()

    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 2)


class Broken(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no class")

    def test_never(self):
        pass


def load_tests(loader, tests, pattern):
    import doctest
    tests.addTests(doctest.DocTestSuite("pkg.mod"))
    return tests
'''
MOD = '''def double(x):
    """
    >>> double(2)
    4
    """
    return 2 * x
'''


def _project(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "test_a.py").write_text(TEST_A)
    (root / "pkg" / "mod.py").write_text(MOD)
    (root / "pkg" / "test_missing.py").write_text("import not_a_module_anywhere\n")


def test_a_real_unittest_run_names_every_test_with_its_outcome(tmp_path: Path) -> None:
    with LocalSandbox() as sb:
        _project(Path(sb.workdir))
        run = run_tests(sb, f"{PY} -m unittest", "unittest", [], 120)
        outcomes = {r.test_id: r.outcome for r in run.results}
        assert outcomes == {
            "pkg.test_a.T.test_ok": "passed",
            "pkg.test_a.T.test_doc": "passed",
            "pkg.test_a.T.test_fail": "failed",
            "pkg.test_a.T.test_err": "error",
            "pkg.test_a.T.test_skip": "skipped",
            "pkg.test_a.T.test_xfail": "skipped",
            "pkg.test_a.T.test_sub": "failed",  # one subtest failed
            "pkg.test_a.Broken.setUpClass": "error",
            "pkg.mod.double": "passed",  # a doctest added by load_tests
            "pkg.test_missing": "error",  # the module that failed to import
        }
        messages = {r.test_id: r.message for r in run.results}
        assert "AssertionError: 1 != 2" in messages["pkg.test_a.T.test_fail"]
        assert "2 not less than 2" in messages["pkg.test_a.T.test_sub"]
        assert "not_a_module_anywhere" in messages["pkg.test_missing"]
        assert messages["pkg.test_a.T.test_skip"] == "no network"
        assert run.counts == {"passed": 3, "failed": 2, "error": 3, "skipped": 2}
        assert run.exit_code == 1 and run.collection_ok

        # The deselected ones (a dotted id, a file, a pytest-style node id) are left out of the results.
        picked = [Deselection(test="pkg.test_a.T.test_fail", reason="r"),
                  Deselection(test="pkg/test_missing.py", reason="r"),
                  Deselection(test="pkg/test_a.py::Broken", reason="r")]
        run = run_tests(sb, f"{PY} -m unittest", "unittest", picked, 120)
        assert {r.test_id for r in run.results} == set(outcomes) - {
            "pkg.test_a.T.test_fail", "pkg.test_missing", "pkg.test_a.Broken.setUpClass"}

        # unittest's own loader counts the suite without running it.
        assert collects("unittest")
        assert collect_count(sb, f"{PY} -m unittest", [], 120, runner="unittest") == (10, "")
        assert collect_count(sb, f"{PY} -m unittest pkg.test_a", picked, 120, runner="unittest") == (7, "")


def test_a_custom_script_is_read_from_its_verbose_lines_and_its_exit_status(tmp_path: Path) -> None:
    script = ("import sys, unittest\n"
              "suite = unittest.defaultTestLoader.loadTestsFromName('pkg.test_a.T.test_ok')\n"
              "result = unittest.TextTestRunner(verbosity=2).run(suite)\n"
              "sys.exit(3)  # fails although every test passed\n")
    with LocalSandbox() as sb:
        _project(Path(sb.workdir))
        (Path(sb.workdir) / "run_tests.py").write_text(script)
        run = run_tests(sb, f"{PY} run_tests.py", "custom", [], 120)
        assert [(r.test_id, r.outcome) for r in run.results] == [
            ("pkg.test_a.T.test_ok", "passed"), (EXIT_STATUS_ID, "error")]
        assert "exited 3" in run.results[-1].message
        assert not collects("custom")


def test_testtools_lines_and_a_runner_that_prints_no_test_lines() -> None:
    output = ("Tests running...\ntests.test_a.T.test_one ... ok\ntests.test_a.T.test_two(scenario x) ... FAIL\n"
              "tests.test_b.U.test_three ... skipped 'later'\n\n" + "=" * 70 + "\n"
              "FAIL: tests.test_a.T.test_two(scenario x)\n" + "-" * 70 + "\nTraceback:\nAssertionError: no\n\n"
              + "-" * 70 + "\nRan 3 tests in 0.1s\nFAILED (failures=1)\n")
    assert [(r.test_id, r.outcome) for r in parse_unittest_verbose(output)] == [
        ("tests.test_a.T.test_one", "passed"), ("tests.test_a.T.test_two(scenario x)", "failed"),
        ("tests.test_b.U.test_three", "skipped")]
    assert "AssertionError: no" in parse_unittest_verbose(output)[1].message
    # Python < 3.11 names the class only: the id is still the test's.
    assert [r.test_id for r in parse_unittest_verbose("test_x (pkg.mod.C) ... ok\n")] == ["pkg.mod.C.test_x"]
    quiet = FakeSandbox(rules=[(r"^python run\.py", ExecResult(exit_code=1, stdout="Ran 4 tests in 0.1s\n\nOK\n"))])
    run = run_tests(quiet.start(), "python run.py", "custom", [], 60)
    assert run.results == [] and run.counts == {"passed": 4, "failed": 0, "error": 1, "skipped": 0}


def test_commands_get_verbose_and_list_forms() -> None:
    assert verbose_command("python -W once -m testtools.run tests.test_suite") == \
        "python -W once -m testtools.run -v tests.test_suite"
    assert verbose_command("python -m unittest discover -s tests") == "python -m unittest discover -v -s tests"
    assert verbose_command("python -m unittest -v tests") == "python -m unittest -v tests"
    assert verbose_command("python run_tests.py") == "python run_tests.py"
    assert list_command("python -m testtools.run tests.test_suite") == "python -m testtools.run tests.test_suite --list"
    assert list_command("python -m unittest discover -s t").startswith("python -c ")
    assert list_command("python -m unittest discover -s t").endswith(" discover -s t")
    assert list_command("python run_tests.py") is None
    assert list_command("coverage run -m unittest discover").startswith("python -c ")  # what coverage runs
    assert list_command("cd t && python3 -m coverage run -p --source x -m unittest discover -s t").startswith(
        "cd t && python -c ")
    assert list_command("xvfb-run -a -m unittest") is None
    assert list_command("cd t && /usr/bin/python3.11 -W once -X dev -m unittest").startswith(
        "cd t && /usr/bin/python3.11 -W once -X dev -c ")
    assert deselects("tests/test_x.py", "tests.test_x.C.test_y")
    assert deselects("tests/test_x.py::C::test_y", "tests.test_x.C.test_y")
    assert deselects("tests.test_x.C", "tests.test_x.C.test_y")
    assert not deselects("tests.test_x.C", "tests.test_x.CD.test_y")
    assert deselects("tests.test_x.C.test_y", "tests.test_x.C.test_y(scenario)")


def test_a_unittest_reward_scores_its_selection_from_the_per_test_results() -> None:
    output = ("pkg.test_a.T.test_one ... ok\npkg.test_a.T.test_two ... FAIL\npkg.test_b.U.test_three ... ok\n"
              "\nRan 3 tests in 0.1s\nFAILED (failures=1)\n")
    sandbox = FakeSandbox(rules=[(r"-m testtools\.run -v", ExecResult(exit_code=1, stdout=output))]).start()
    spec = RuntimeSpec(image="img", test_command="python -m testtools.run tests", test_runner="unittest")
    reward = run_reward(sandbox, spec, ["pkg.test_a.T", "pkg.test_c"], None, lambda: None)
    assert (reward.passed, reward.total) == (1, 3)  # test_one passed, test_two failed, pkg.test_c never ran
    assert {t.test_id: t.outcome for t in reward.tests} == {
        "pkg.test_a.T.test_one": "passed", "pkg.test_a.T.test_two": "failed", "pkg.test_c": "not_run"}
    assert run_reward(sandbox, spec, [], None, lambda: None).value == 2 / 3


def test_the_collect_check_lists_what_the_command_runs(tmp_path: Path) -> None:
    with LocalSandbox() as sb:
        _project(Path(sb.workdir))
        check = listing_check(f"{PY} -m unittest pkg.test_a")
        assert check is not None and sb.exec(check, timeout=120).ok
        assert not sb.exec(listing_check(f"{PY} -m unittest discover -s nowhere_at_all") or "", timeout=120).ok
    assert listing_check("python run_tests.py") is None


def test_a_suite_that_runs_its_tests_twice_names_each_once_with_its_worst_outcome() -> None:
    output = ("test_a (m.T.test_a) ... ok\ntest_b (m.T.test_b) ... skipped 'no C'\n"
              "test_a (m.T.test_a) ... FAIL\ntest_b (m.T.test_b) ... ok\n\nRan 4 tests in 0.1s\n"
              "FAILED (failures=1, skipped=1)\n")
    sandbox = FakeSandbox(rules=[(r"^python -m m", ExecResult(exit_code=1, stdout=output))]).start()
    run = run_tests(sandbox, "python -m m", "custom", [], 60)
    assert [(r.test_id, r.outcome) for r in run.results] == [("m.T.test_a", "failed"), ("m.T.test_b", "passed")]


def test_a_unittest_discovery_under_coverage_is_listed_from_the_folder_it_names(tmp_path: Path) -> None:
    """`coverage run -m unittest discover ./tests` with a tests folder that is not a package: its tests are
    listed and counted as the command finds them (from the folder itself, not the repository's top)."""
    with LocalSandbox() as sb:
        tests = Path(sb.workdir) / "tests"
        tests.mkdir()
        (tests / "helpers.py").write_text("VALUE = 2\n")
        (tests / "test_values.py").write_text("import unittest\nfrom helpers import VALUE\n"
                                              "class T(unittest.TestCase):\n    def test_a(self):\n"
                                              "        self.assertEqual(VALUE, 2)\n    def test_b(self):\n"
                                              "        pass\n")
        command = "coverage run --source=. -m unittest discover ./tests"
        env = {"PATH": f"{Path(PY).parent}:{os.environ['PATH']}"}  # `python` is this interpreter
        check = listing_check(command)
        assert check is not None and sb.exec(check, timeout=120, env=env).ok
        assert collect_count(sb, command, [], 120, env, "unittest") == (2, "")
        assert collect_count(sb, command.replace("./tests", "./elsewhere"), [], 120, env, "unittest")[0] is None
