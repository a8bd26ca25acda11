"""`mvn test`: Surefire's XML reports (target/surefire-reports/TEST-*.xml of every module) -> per-test
results, deselections through a Surefire excludes file, and counts from a run (Maven cannot list a suite
without running it; JUnit 5's dry run makes that run cheap).

Test ids are `<class>#<method as Surefire names it>`: `com.example.CalcTest#addsTwoNumbers`, a parameterized
case `com.example.CalcTest#addsTable(int, int, int)[1]`. A deselected id leaves out its whole method (every
parameterized case of it), an id without `#` its whole class, in every module; `module:<folder>` names a reactor
module left out whole (by `-pl` in MAVEN_ARGS, which the environment sets), which Surefire never sees.
"""
from __future__ import annotations

import re
import shlex

from envs.base import REPORT_CAP_BYTES, Sandbox
from envs.grading.kit.parsers import surefire
from envs.spec import Deselection, TestResult, TestRun
from envs.testrun.convert import last_per_id
from envs.testrun.junit import count

REPORTS = "target/surefire-reports"
EXCLUDES_FILE = "/var/tmp/autoinstall-surefire-excludes.txt"
"""Not /tmp: a file put into the tmpfs there from outside is not seen inside."""
CLEAN = f"find . -path '*/{REPORTS}' -type d -prune -exec rm -rf {{}} + 2>/dev/null; "
"""Reports of an earlier run (the build's, the other verification run's) must not count for this one."""
READ = (f"find . -path '*/{REPORTS}/TEST-*.xml' -type f 2>/dev/null | sort | "
        "while read -r f; do echo \"==> $f <==\"; "
        f"head -c {REPORT_CAP_BYTES} \"$f\" | sed '/<properties>/,/<\\/properties>/d'; echo; "
        f"[ \"$(stat -c %s \"$f\")\" -gt {REPORT_CAP_BYTES} ] && echo \"cut: $f\" >&2; done; true")
"""Every report under a header, its first REPORT_CAP_BYTES only (a longer one is named on stderr), without
its <properties> block (the JVM's system properties, most of a report's bytes)."""
READ_CAP = 256 * 1024 * 1024
"""A large suite's reports run to megabytes: past the default output cap their middle would be dropped."""
_METHOD_END = re.compile(r"[(\[]")
MODULE_PREFIX = "module:"
"""Starts the id of a deselected reactor module (its folder follows)."""


def exclusion(test_id: str) -> str:
    """A Surefire pattern for a deselected id: `pkg.Class#method` (parameters and case index dropped, so
    every case of the method), or the class alone."""
    cls, _, method = test_id.partition("#")
    method = _METHOD_END.split(method, 1)[0].strip()
    return f"{cls}#{method}" if method else cls


def excludes(deselected: list[Deselection]) -> list[str]:
    """The Surefire patterns of the deselected tests and classes (modules left out are not Surefire's)."""
    return sorted({exclusion(d.test) for d in deselected if not d.test.startswith(MODULE_PREFIX)})


def maven_test_command(command: str, deselected: list[Deselection]) -> str:
    """`command` after clearing old reports, with Surefire reading EXCLUDES_FILE when tests are left out
    (the project's own includes and excludes still apply), and stderr merged."""
    if excludes(deselected):
        command += (f" -Dsurefire.excludesFile={EXCLUDES_FILE} -Dsurefire.failIfNoSpecifiedTests=false"
                    " -DfailIfNoTests=false")
    return f"{CLEAN}{command} 2>&1"


def select_command(command: str, select_file: str, folder: str) -> str:
    """`command` running only the methods the ids in `select_file` name (`pkg.Class#method(args)[case]`, one a
    line), in every module: Surefire's `-Dtest` list of `pkg.Class#method` (every case of a parameterized
    method runs: the run may report more than the ids, never fewer), and no module fails for having none of
    them. Appended as the excludes are: the command ends with its Maven invocation. `folder` is unused: Maven
    needs no plug-in."""
    methods = f"$(sed -E 's/[([].*$//; s/[[:space:]]+$//' {shlex.quote(select_file)} | sort -u | paste -sd, -)"
    return f'{command} -Dtest="{methods}" -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false'


def parse_surefire_reports(text: str) -> list[TestResult]:
    """Per-test results from Surefire's TEST-*.xml reports, concatenated under `==> path <==` headers (as
    READ prints them). A report that is not XML (a crashed fork's half-written file) is skipped."""
    return last_per_id(surefire.parse(text))


def _run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
         env: dict[str, str] | None) -> tuple[TestRun, list[TestResult]]:
    if patterns := excludes(deselected):
        sandbox.write_file(EXCLUDES_FILE, ("\n".join(patterns) + "\n").encode())
    result = sandbox.exec(maven_test_command(command, deselected), timeout=timeout_s, env=env)
    reports = sandbox.exec(READ, timeout=300, output_cap=READ_CAP)
    results = parse_surefire_reports(reports.stdout)
    notes = [f"[autoinstall] the Surefire report {line[5:]} was cut at {REPORT_CAP_BYTES} bytes: its results "
             "are not read" for line in reports.stderr.splitlines() if line.startswith("cut: ")]
    output = "\n".join([result.output, *notes]) if notes else result.output
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=output[-4000:], results=results, counts=count(results),
                  collection_ok=result.exit_code == 0 or bool(results))
    return run, results


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run the Maven test command; per-test results from every module's reports. Collection failed when no
    report was written and Maven did not succeed (a compile error, an unresolvable artifact)."""
    return _run(sandbox, command, deselected, timeout_s, env)[0]


DRY_RUN = "-Djunit.platform.execution.dryRun.enabled=true"
"""JUnit 5's dry run (Surefire passes -D properties to the test JVM): every plain test is reported, as
skipped, without running; parameterized and other templated tests are not reported at all (their cases are
never expanded), so the count is a lower bound, consistent between the suite and the selection. JUnit 4 and
TestNG ignore it, and their suites really run."""


def collect(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
            env: dict[str, str] | None) -> tuple[int | None, str]:
    """The tests `command` reports with `deselected` left out (skipped ones included), from a dry run where
    JUnit 5 has one (DRY_RUN), else from a real run: Surefire has no listing mode."""
    run_, results = _run(sandbox, f"{command} {DRY_RUN}", deselected, timeout_s, env)
    if not results and run_.exit_code != 0:
        tail = run_.output_tail.strip().splitlines()[-1:] or ["(no output)"]
        return None, f"the Maven run wrote no Surefire report (exit {run_.exit_code}): {tail[0][:200]}"
    return len(results), ""
