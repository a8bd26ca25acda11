"""The `maven` test runner (Surefire's XML reports -> per-test results), its deselections through an
excludes file, and counts from a run. Fast: no Docker, no Maven; the reports are captured from
tests/fixtures/repos/java_maven (plus a class with a failing and an offline-network test) run by Debian
trixie's Maven 3.9.9 and Surefire 3.5.2 with JUnit 5."""
from __future__ import annotations

import subprocess
from pathlib import Path

from envs.base import ExecResult
from envs.fake import FakeSandbox
from envs.spec import Deselection
from envs.testrun import abilities, collect_count, collects, run_tests
from envs.testrun.maven_runner import EXCLUDES_FILE, exclusion, maven_test_command, parse_surefire_reports

REPORTS = (Path(__file__).parent / "data" / "surefire_reports_java_maven.txt").read_text()
COMMAND = "mvn -B -ntp -o test -Dmaven.test.failure.ignore=true"


def test_surefire_reports_become_class_hash_method_ids_with_outcomes_and_messages() -> None:
    results = parse_surefire_reports(REPORTS)
    assert [(r.test_id, r.outcome) for r in results] == [
        ("com.example.calc.CalcTest#slowSum", "skipped"),
        ("com.example.calc.CalcTest#divisionByZeroThrows", "passed"),
        ("com.example.calc.CalcTest#addsTwoNumbers", "passed"),
        ("com.example.calc.CalcTest#addsTable(int, int, int)[1]", "passed"),
        ("com.example.calc.CalcTest#addsTable(int, int, int)[2]", "passed"),
        ("com.example.calc.NetTest#wrongSum", "failed"),
        ("com.example.calc.NetTest#resolvesAHost", "error"),
        ("com.example.calc.ShoutTest#shoutsInCapitals", "passed"),
    ]
    by_id = {r.test_id: r for r in results}
    assert "sums are off ==> expected: <6> but was: <5>" in by_id["com.example.calc.NetTest#wrongSum"].message
    assert "UnknownHostException" in by_id["com.example.calc.NetTest#resolvesAHost"].message
    assert by_id["com.example.calc.CalcTest#slowSum"].message == "slow on purpose"
    assert by_id["com.example.calc.CalcTest#divisionByZeroThrows"].duration_s > 0


def test_a_half_written_report_is_skipped_and_nothing_is_no_results() -> None:
    broken = "==> ./target/surefire-reports/TEST-a.B.xml <==\n<testsuite><testcase name=\n"
    assert parse_surefire_reports(broken + REPORTS)[0].test_id == "com.example.calc.CalcTest#slowSum"
    assert parse_surefire_reports("") == []


def test_deselections_become_excludes_patterns_of_whole_methods_or_classes() -> None:
    assert exclusion("a.B#m(int, int)[2]") == "a.B#m" and exclusion("a.B#m[0]") == "a.B#m"
    assert exclusion("a.B#plain") == "a.B#plain" and exclusion("a.B") == "a.B"
    plain = maven_test_command(COMMAND, [])
    assert plain.startswith("find . -path '*/target/surefire-reports'") and plain.endswith(f"{COMMAND} 2>&1")
    assert "excludesFile" not in plain
    left_out = maven_test_command(COMMAND, [Deselection(test="a.B#m", reason="r")])
    assert f"{COMMAND} -Dsurefire.excludesFile={EXCLUDES_FILE} -Dsurefire.failIfNoSpecifiedTests=false" in left_out


def test_run_writes_the_excludes_file_and_reads_every_modules_reports() -> None:
    box = FakeSandbox(rules=[(r"^find \. -path '\*/target/surefire-reports/TEST", REPORTS),
                             (r"mvn -B", ExecResult(exit_code=0, stdout="[INFO] BUILD SUCCESS"))]).start()
    deselected = [Deselection(test="com.example.calc.NetTest#resolvesAHost", reason="internet"),
                  Deselection(test="com.example.calc.CalcTest#addsTable(int, int, int)[1]", reason="r")]
    run = run_tests(box, COMMAND, "maven", deselected, 60)
    assert box.files[EXCLUDES_FILE].decode() == "com.example.calc.CalcTest#addsTable\ncom.example.calc.NetTest#resolvesAHost\n"
    assert run.collection_ok and run.counts == {"passed": 5, "failed": 1, "error": 1, "skipped": 1}
    assert collects("maven") and collect_count(box, COMMAND, [], 60, runner="maven") == (8, "")
    assert box.commands()[-2].endswith(f"{COMMAND} -Djunit.platform.execution.dryRun.enabled=true 2>&1")


def test_a_build_that_fails_before_any_report_is_a_failed_collection() -> None:
    failure = ExecResult(exit_code=1, stdout="[ERROR] COMPILATION ERROR :\n[ERROR] /w/src/A.java:[3,1] oops")
    box = FakeSandbox(rules=[(r"^find \. -path '\*/target/surefire-reports/TEST", ""), (r"mvn -B", failure)]).start()
    run = run_tests(box, COMMAND, "maven", [], 60)
    assert not run.collection_ok and run.results == [] and "oops" in run.output_tail
    count, note = collect_count(box, COMMAND, [], 60, runner="maven")
    assert count is None and "no Surefire report (exit 1)" in note and "oops" in note


def test_a_selection_runs_the_named_methods_in_every_module(tmp_path: Path) -> None:
    """The selecting command as bash runs it (an `mvn` that prints its arguments): one -Dtest list of
    `Class#method` (a parameterized method's cases and a nested class kept whole), no module failing for
    having none of them."""
    ids = tmp_path / "select.txt"
    ids.write_text("com.example.CalcTest#adds\ncom.example.CalcTest#addsTable(int, int, int)[1]\n"
                   "com.example.CalcTest#addsTable(int, int, int)[2]\ncom.example.Outer$InnerTest#works\n")
    command = abilities("maven").select.command(COMMAND, str(ids), "/unused")  # type: ignore[union-attr]
    shown = subprocess.run(["bash", "-c", f"mvn() {{ printf '%s\\n' \"$@\"; }}; {command}"], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    assert shown == [*COMMAND.split()[1:], "-Dtest=com.example.CalcTest#adds,com.example.CalcTest#addsTable,"
                     "com.example.Outer$InnerTest#works", "-Dsurefire.failIfNoSpecifiedTests=false",
                     "-DfailIfNoTests=false"]
