"""What the sandbox's code wrote reaches the host bounded: a file is read up to a cap (no more held in memory,
nothing spooled to host disk) and a cut report is a note, never a traceback. Hostile fixture: a test run that
turns its report into a 600 MB sparse file."""

from __future__ import annotations

import os
import tempfile
import tracemalloc
from typing import Any

import pytest

from autoinstall.tasks import coverage, validate
from autoinstall.tasks.workspace import SOURCE_CAP_BYTES, read_sources
from envs.base import REPORT_CAP_BYTES, ExecResult, Sandbox, read_capped
from envs.fake import FakeSandbox
from envs.local import LocalSandbox
from envs.testrun import run_tests
from envs.testrun.maven_runner import READ

MiB = 1024 * 1024
WHY = "(the host reads no more of a file)"
FAKE_PYTEST = """for a; do case "$a" in --junitxml=*) truncate -s 600M "${a#--junitxml=}";; esac; done
echo '============ 3 passed in 0.01s ============'
"""
"""A "pytest" that turns its JUnit report into a 600 MB sparse file and prints pytest's summary line."""


def _no_spooling(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        pytest.fail("the read spooled the sandbox's file to host disk")

    for name in ("TemporaryFile", "NamedTemporaryFile", "SpooledTemporaryFile"):
        monkeypatch.setattr(tempfile, name, refuse)


def test_a_600_mb_sparse_report_is_read_up_to_the_cap_without_holding_or_spooling_more(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    assert sandbox.exec("truncate -s 600M report.xml").ok
    cap = 4 * MiB
    _no_spooling(monkeypatch)
    tracemalloc.start()
    try:
        data, note = read_capped(sandbox, "report.xml", cap)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(data) == cap and data == bytes(cap)
    assert note.endswith(f"report.xml was cut at {cap} bytes {WHY}")
    assert peak < 3 * cap + MiB, f"the host held {peak / MiB:.0f} MiB to read {cap / MiB:.0f} MiB"
    assert len(sandbox.read_file("report.xml")) == REPORT_CAP_BYTES  # the default limit
    sandbox.exec("rm -f report.xml")


def test_a_file_within_the_cap_is_whole_and_limit_cuts_it(sandbox: Sandbox) -> None:
    sandbox.write_file("small.txt", b"0123456789")
    assert read_capped(sandbox, "small.txt", 10) == (b"0123456789", "")
    assert sandbox.read_file("small.txt", limit=4) == b"0123"
    assert read_capped(sandbox, "small.txt", 9)[1].endswith(f"small.txt was cut at 9 bytes {WHY}")


def test_links_fifos_and_directories_are_refused_not_followed_or_waited_on(sandbox: Sandbox) -> None:
    assert sandbox.exec("echo secret > target; ln -sf target link; rm -f fifo; mkfifo fifo; mkdir -p dir").ok
    for path in ("link", "fifo"):
        with pytest.raises(FileNotFoundError, match="Not a regular file"):
            sandbox.read_file(path)
    with pytest.raises(IsADirectoryError):
        sandbox.read_file("dir")
    with pytest.raises(FileNotFoundError):
        sandbox.read_file("absent")


def test_a_pytest_run_whose_junit_report_is_600_mb_counts_from_its_summary_and_says_it_was_cut(
        sandbox: Sandbox) -> None:
    sandbox.write_file("fakepytest.sh", FAKE_PYTEST.encode())
    tracemalloc.start()
    try:
        run = run_tests(sandbox, "sh fakepytest.sh", "pytest", [], 120)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert run.results == [] and run.counts["passed"] == 3
    assert f"was cut at {REPORT_CAP_BYTES} bytes" in run.output_tail
    assert "its per-test results are not read" in run.output_tail.splitlines()[-1]
    assert peak < 3 * REPORT_CAP_BYTES, f"the host held {peak / MiB:.0f} MiB"


def test_a_cut_junit_report_in_a_fake_sandbox_is_a_note_not_a_traceback() -> None:
    xml = b'<testsuite><testcase classname="t" name="a"/>' + b" " * REPORT_CAP_BYTES + b"</testsuite>"

    def pytest_run(box: FakeSandbox, command: str, env: dict[str, str]) -> ExecResult | None:
        if "--junitxml=" not in command:
            return None
        box.write_file(command.split("--junitxml=")[1].split()[0], xml)
        return ExecResult(exit_code=0, stdout="1 passed in 0.1s")

    with FakeSandbox(behaviour=pytest_run) as box:
        run = run_tests(box, "pytest", "pytest", [], 60)
    assert run.results == [] and run.counts["passed"] == 1
    assert f"was cut at {REPORT_CAP_BYTES} bytes" in run.output_tail


def test_fake_read_file_honours_the_limit() -> None:
    with FakeSandbox() as box:
        box.write_file("f", b"abcdef")
        assert box.read_file("f", limit=2) == b"ab" and box.read_file("f") == b"abcdef"
        assert box.calls[-1].args == {"path": "f", "limit": REPORT_CAP_BYTES}


def test_an_oversized_surefire_report_is_cut_in_the_sandbox_and_noted() -> None:
    with LocalSandbox() as sb:
        assert sb.exec("mkdir -p target/surefire-reports && cd $_ && truncate -s 600M TEST-a.xml").ok
        out = sb.exec(READ, timeout=120, output_cap=64 * MiB)
    assert out.stderr == "cut: ./target/surefire-reports/TEST-a.xml\n"
    assert len(out.stdout) <= REPORT_CAP_BYTES + 100 and not out.truncated
    box = FakeSandbox(rules=[(r"^find \. -path '\*/target/surefire-reports/TEST",
                              ExecResult(exit_code=0, stdout="==> ./x <==\n<testsuite>", stderr=out.stderr)),
                             (r"mvn", ExecResult(exit_code=0, stdout="[INFO] BUILD SUCCESS"))]).start()
    run = run_tests(box, "mvn -B test", "maven", [], 60)
    assert run.results == []
    assert run.output_tail.endswith(f"the Surefire report ./target/surefire-reports/TEST-a.xml was cut at "
                                    f"{REPORT_CAP_BYTES} bytes: its results are not read")


def test_an_oversized_coverage_map_is_no_map_with_a_log_line() -> None:
    logged: list[str] = []
    with FakeSandbox() as box:
        box.write_file("trace.json", b'{"t::a": []' + b" " * REPORT_CAP_BYTES + b"}")
        assert coverage.read_map(box, "trace.json", ["t::a"], log=logged.append) is None
        box.write_file("trace.json", b'{"t::a": ["m.py::f", 3], "t::b": 7}')
        kept = coverage.read_map(box, "trace.json", ["t::a"])
        assert kept is not None and kept.tests == {"t::a": ["m.py::f"]}
        box.write_file("trace.json", b"[1, 2]")
        assert coverage.read_map(box, "trace.json", ["t::a"]) is None
    assert logged == [f"no coverage map: trace.json was cut at {REPORT_CAP_BYTES} bytes {WHY}"]


def test_sources_past_the_cap_are_not_read_and_files_past_it_are_not_compared() -> None:
    logged: list[str] = []
    with FakeSandbox() as box:
        box.write_file("small.py", b"x = 1\n")
        box.write_file("huge.py", b"#" * (SOURCE_CAP_BYTES + 1))
        texts = read_sources(box, ["small.py", "huge.py", "absent.py"], log=logged.append)
        assert texts == {"small.py": "x = 1\n"}
        compared = validate._contents(box, ["small.py", "absent.py"])
        assert compared == {"small.py": b"x = 1\n", "absent.py": None}
        box.write_file("big.py", b"#" * (REPORT_CAP_BYTES + 1))
        assert validate._contents(box, ["small.py", "big.py"]) is None
    assert logged == [f"huge.py was cut at {SOURCE_CAP_BYTES} bytes {WHY}: not mutated"]


@pytest.mark.docker
def test_a_tree_past_the_carry_cap_stops_at_the_member_that_passes_it_without_spooling_the_rest(
        base_image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from envs.docker import DockerSandbox
    from tests.envs.conftest import RUN_LABEL

    with DockerSandbox(image=base_image, labels=RUN_LABEL) as agent, \
            DockerSandbox(image=base_image, labels=RUN_LABEL) as grader:
        assert agent.exec("mkdir -p tree && echo ok > tree/a.txt && truncate -s 600M tree/b.bin").ok
        grader.exec(["mkdir", "-p", "/carried"])
        real, spools = tempfile.TemporaryFile, []

        def spool(*args: Any, **kwargs: Any) -> Any:  # the kept members' own archive: up to the cap
            f = real(*args, **kwargs)
            spools.append(os.dup(f.fileno()))
            return f

        _no_spooling(monkeypatch)
        monkeypatch.setattr(tempfile, "TemporaryFile", spool)
        with pytest.raises(ValueError, match="holds more than 10 MiB"):
            agent.copy_tree_to("tree", grader, "/carried", lambda member: True, 10 * MiB)
        sizes = [os.fstat(fd).st_size for fd in spools]
        for fd in spools:
            os.close(fd)
        assert sizes and max(sizes) < 11 * MiB, sizes
        assert agent.exec("rm tree/b.bin").ok  # the engine is not stuck on the abandoned stream
        carried, notes = agent.copy_tree_to("tree", grader, "/carried", lambda member: True, 10 * MiB)
        assert (carried, notes) == (3, []) and grader.read_file("/carried/tree/a.txt") == b"ok\n"
