"""The per-test timeout plugin (envs/testrun/timeout_plugin.py), run for real by pytest in a subprocess."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.spec import TestRun
from envs.testrun import PIDS_EVENTS, pytest_output, run_tests
from envs.testrun import timeout_plugin as plugin
from envs.testrun.junit import parse_junit
from envs.testrun.pytest_runner import CURRENT_ENV, PLUGIN, PLUGIN_SOURCE

SUITE = '''
import socket
import time

import pytest


@pytest.mark.parametrize("n", range(3))
def test_quick(n):
    assert n >= 0


def test_blocks_on_a_socket():
    mine, peer = socket.socketpair()
    assert mine.recv(1) == b"x"


def test_after_the_hang():
    assert True
'''

STUBBORN = '''
import time


def test_swallows_everything():
    while True:
        try:
            time.sleep(60)
        except BaseException:
            pass


def test_never_reached():
    assert True
'''


def _run(tmp_path: Path, source: str, **env: str) -> tuple[subprocess.CompletedProcess, list]:
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / f"{PLUGIN}.py").write_bytes(PLUGIN_SOURCE)
    (tmp_path / "test_suite.py").write_text(source)
    junit = tmp_path / "junit.xml"
    environ = {**os.environ, "PYTHONPATH": str(tmp_path / "plugin"), **env}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", PLUGIN, "-p", "no:cacheprovider",
                           "-o", "junit_family=xunit1", f"--junitxml={junit}", "test_suite.py"],
                          cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120)
    results = parse_junit(junit.read_text()) if junit.exists() else []
    return done, results


def test_constants_agree_with_the_parsers() -> None:
    assert (plugin.MARKER, plugin.TIMEOUT_ENV, plugin.MAX_HANGS_ENV, plugin.HANG_EXIT) == (
        pytest_output.MARKER, pytest_output.TIMEOUT_ENV, pytest_output.MAX_HANGS_ENV, pytest_output.HANG_EXIT)
    assert plugin.CURRENT_ENV == CURRENT_ENV


CRASHING = '''
import ctypes


def test_before():
    assert True


def test_reads_address_zero():
    ctypes.string_at(0)


def test_never_reached():
    assert True
'''


def test_a_process_that_crashes_leaves_the_id_of_the_test_it_died_in(tmp_path: Path) -> None:
    current = tmp_path / "current-test"
    done, results = _run(tmp_path, CRASHING, **{CURRENT_ENV: str(current)})
    assert done.returncode in (-11, 139) and results == [], (done.returncode, done.stdout[-500:])
    assert current.read_text() == "test_suite.py::test_reads_address_zero"


def test_a_hanging_test_fails_with_the_marker_and_the_suite_goes_on(tmp_path: Path) -> None:
    done, results = _run(tmp_path, SUITE, AUTOINSTALL_TEST_TIMEOUT="1")
    outcomes = {r.test_id: r.outcome for r in results}
    assert outcomes["test_suite.py::test_blocks_on_a_socket"] == "failed", done.stdout
    assert outcomes["test_suite.py::test_after_the_hang"] == "passed"
    assert sum(o == "passed" for o in outcomes.values()) == 4
    hung = pytest_output.hung_tests(TestRun(exit_code=done.returncode, results=results))
    assert list(hung) == ["test_suite.py::test_blocks_on_a_socket"]
    assert "ran over 1 s (the per-test timeout)" in hung["test_suite.py::test_blocks_on_a_socket"]


def test_without_the_variable_the_plugin_does_nothing(tmp_path: Path) -> None:
    done, results = _run(tmp_path, SUITE.replace("mine.recv(1)", "b'x'"))
    assert done.returncode == 0 and len(results) == 5


@pytest.mark.slow
def test_the_session_stops_after_max_hangs(tmp_path: Path) -> None:
    source = SUITE + "\n\ndef test_second_hang():\n    import time\n    time.sleep(60)\n\n\ndef test_last():\n    pass\n"
    done, results = _run(tmp_path, source, AUTOINSTALL_TEST_TIMEOUT="1", AUTOINSTALL_MAX_HANGS="2")
    ids = [r.test_id for r in results]
    assert "test_suite.py::test_second_hang" in ids and "test_suite.py::test_last" not in ids, done.stdout


@pytest.mark.slow
def test_a_test_that_swallows_the_timeout_ends_the_session_with_its_id(tmp_path: Path) -> None:
    done, results = _run(tmp_path, STUBBORN, AUTOINSTALL_TEST_TIMEOUT="1", AUTOINSTALL_TIMEOUT_GRACE="1")
    assert done.returncode == pytest_output.HANG_EXIT, done.stdout + done.stderr
    run = TestRun(exit_code=done.returncode, output_tail=(done.stdout + done.stderr)[-4000:])
    assert list(pytest_output.hung_tests(run)) == ["test_suite.py::test_swallows_everything"]
    assert "test_swallows_everything" in done.stderr  # the stack dump says where it was


@pytest.mark.parametrize("source, expected", [
    ("def test_a():\n    pass\nclass TestB:\n    def test_c(self):\n        pass\n    def helper(self):\n        pass\n", 2),
    ("print 'python 2'\ndef test_a():\n    pass\ndef test_b():\n    pass\n", 2),
    ("X = 1\n", 1),
])
def test_static_test_count(source: str, expected: int) -> None:
    assert pytest_output.static_test_count(source) == expected


def test_the_plugin_starts_no_thread_a_suite_could_see(tmp_path: Path) -> None:
    source = "import threading\n\n\ndef test_only_main():\n    assert threading.enumerate() == [threading.main_thread()]\n"
    done, results = _run(tmp_path, source, AUTOINSTALL_TEST_TIMEOUT="30")
    assert done.returncode == 0 and [r.outcome for r in results] == ["passed"], done.stdout


@pytest.mark.slow
def test_a_test_no_signal_reaches_still_ends_the_session(tmp_path: Path) -> None:
    source = ("import signal\nimport time\n\n\ndef test_blocks_alarms():\n"
              "    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n    time.sleep(60)\n")
    done, _ = _run(tmp_path, source, AUTOINSTALL_TEST_TIMEOUT="1", AUTOINSTALL_TIMEOUT_GRACE="0.5")
    assert done.returncode != 0 and "Timeout (0:00:07)!" in done.stderr  # faulthandler's watchdog, at 1+2*0.5+5 s


def test_the_runner_writes_the_plugin_for_the_run_only_and_runs_without_it_when_it_cannot_load() -> None:
    sandbox = FakeSandbox(rules=[
        (r"-p autoinstall_timeout", ExecResult(exit_code=1, stderr='ImportError: Error importing plugin '
                                                                   '"autoinstall_timeout": No module named x')),
        (r"--junitxml", ExecResult(exit_code=0, stdout="3 passed in 0.1s\n"))]).start()
    run = run_tests(sandbox, "tox -e py -- ", "pytest", [], 600)
    commands = [c for c in sandbox.commands() if c != PIDS_EVENTS]  # the runner's own commands
    assert commands[0].startswith("export PYTHONPATH=/var/tmp/autoinstall-plugin-")
    assert "-p autoinstall_timeout" in commands[0]
    assert commands[1].startswith("tox -e py -- ") and "autoinstall_timeout" not in commands[1]
    assert commands[-1].startswith("rm -rf /var/tmp/autoinstall-junit-")  # nothing stays in a snapshot
    assert run.counts["passed"] == 3
    written = [c.args["path"] for c in sandbox.calls if c.method == "write_file"]
    assert len(written) == 1 and written[0].endswith("/autoinstall_timeout.py")
    first = next(c for c in sandbox.calls if c.method == "exec" and c.args["cmd"] != PIDS_EVENTS)
    assert first.args["env"]["AUTOINSTALL_TEST_TIMEOUT"] == "120"  # min(120, 600 / 4)
