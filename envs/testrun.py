"""Running a test command and reading its results: per-test JUnit XML, or a runner's summary line.

`run_tests` takes a command and a runner name, not a plan: the builder's verifier, the runtime's reward
and the exporters' scoring scripts all run tests the same way.
"""
from __future__ import annotations

import re
import shlex
import uuid
import xml.etree.ElementTree as ET
from typing import Literal

from envs.base import Sandbox
from envs.spec import Deselection, Outcome, Plan, TestResult, TestRun

TestRunner = Literal["pytest", "unittest", "custom", "none"]
COLLECTING_RUNNERS = frozenset({"pytest"})
DEFAULT_COMMANDS = {"pytest": "python -m pytest"}
"""The runner run with nothing but its own configuration: what "the default collection" means."""
"""Runners with a collect-only mode, so that a `collect` check can run before the tests do."""


def collects(runner: str) -> bool:
    """True when `runner` can collect tests without running them (its `collect` checks are meaningful)."""
    return runner in COLLECTING_RUNNERS


def test_command(plan: Plan) -> str | None:
    """The command that runs the project's tests, from the plan."""
    if plan.test_command:
        return plan.test_command
    return next((c.command for c in plan.checks if c.kind == "tests"), None)


def pytest_args(deselected: list[Deselection], junit_path: str) -> str:
    """Options appended to a pytest command: JUnit output, no cache, the deselections."""
    args = ["-p", "no:cacheprovider", "-o", "junit_family=xunit1", f"--junitxml={junit_path}", "--color=no"]
    return " ".join(shlex.quote(a) for a in [*args, *selection_args(deselected)])


def selection_args(deselected: list[Deselection]) -> list[str]:
    """pytest options that leave out the deselected node ids (--deselect) and files (--ignore)."""
    return [f"--deselect={d.test}" if "::" in d.test else f"--ignore={d.test}" for d in deselected]


_COLLECTED = re.compile(r"^(?:(?P<selected>\d+)/)?(?P<total>\d+) tests? collected|^(?P<none>no tests) collected", re.M)


def collect_count(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
                  env: dict[str, str] | None = None) -> tuple[int | None, str]:
    """How many tests a pytest command collects with `deselected` left out, without running them.

    Returns:
        (count, note): the count, or None with a note saying why it could not be read.
    """
    args = ["-p", "no:cacheprovider", "--collect-only", "-q", "--color=no", *selection_args(deselected)]
    result = sandbox.exec(f"{command} {' '.join(shlex.quote(a) for a in args)}", timeout=timeout_s, env=env)
    found = list(_COLLECTED.finditer(result.output))
    if not found:
        tail = result.output.strip().splitlines()[-1:] or ["(no output)"]
        return None, f"`{command} --collect-only` printed no count (exit {result.exit_code}): {tail[0][:200]}"
    last = found[-1]
    if last.group("none"):
        return 0, ""
    return int(last.group("selected") or last.group("total")), ""


def run_tests(sandbox: Sandbox, command: str | None, runner: TestRunner, deselected: list[Deselection],
              timeout_s: float, env: dict[str, str] | None = None) -> TestRun:
    """Run a test command once in `sandbox` and collect per-test results.

    Args:
        sandbox: a started sandbox whose workdir holds the project.
        command: the project's test command; None means there are no tests.
        runner: how to read the results: "pytest" gets JUnit XML and the deselections as options;
            "unittest" and "custom" are read from their summary line.
        deselected: tests (node ids) or files left out, passed to pytest.
        timeout_s: the command's timeout.
        env: extra environment variables for the command.
    """
    if command is None:
        return TestRun(exit_code=5, collection_ok=False, output_tail="no test command")
    junit = f"/var/tmp/autoinstall-junit-{uuid.uuid4().hex[:8]}.xml"
    is_pytest = runner == "pytest"
    full = f"{command} {pytest_args(deselected, junit)}" if is_pytest else command
    result = sandbox.exec(full, timeout=timeout_s, env=env)
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=result.output[-4000:])
    if is_pytest:
        try:
            run.results = parse_junit(sandbox.read_file(junit).decode("utf-8", "replace"))
            sandbox.exec(["rm", "-f", junit])
        except (FileNotFoundError, Exception):  # noqa: BLE001 - a missing or broken report means no results
            run.results = []
        # No report (e.g. the project's addopts say `-p no:junitxml`): fall back to pytest's summary line.
        run.counts = count(run.results) if run.results else parse_summary(result.output)
        run.collection_ok = result.exit_code in (0, 1, 5) and not result.timed_out
    else:
        run.counts = parse_summary(result.output)
        run.collection_ok = run.ran > 0 or result.exit_code == 0
        if result.exit_code != 0 and run.ran and not (run.counts["failed"] or run.counts["error"]):
            # The runner's exit status is the verdict too: a failure its summary line did not count.
            run.counts["error"] += 1
    return run


def _node_id(case: ET.Element) -> str:
    classname, name = case.get("classname", ""), case.get("name", "")
    file = case.get("file")
    module = file.removesuffix(".py").replace("/", ".") if file else ""
    if file and (classname == module or classname.startswith(module + ".")):
        rest = classname[len(module):].lstrip(".")
        return "::".join(p for p in (file, rest.replace(".", "::"), name) if p)
    parts = classname.split(".")
    classes = next((i for i, part in enumerate(parts) if part[:1].isupper()), None)
    if file and classes:
        # The test is inherited: `file` is where it is defined, classname says where it was collected.
        return "::".join(["/".join(parts[:classes]) + ".py", *parts[classes:], name])
    # Without a file attribute: guess the module as the longest prefix starting with test_ or ending in _test.
    for i in range(len(parts), 0, -1):
        if parts[i - 1].startswith("test") or parts[i - 1].endswith("test") or parts[i - 1].endswith("tests"):
            path = "/".join(parts[:i]) + ".py"
            return "::".join(p for p in (path, "::".join(parts[i:]), name) if p)
    return "::".join(p for p in (classname.replace(".", "/"), name) if p)


def parse_junit(xml_text: str) -> list[TestResult]:
    """Test cases from a JUnit XML report (pytest's xunit1 or xunit2)."""
    root = ET.fromstring(xml_text)
    results = []
    for case in root.iter("testcase"):
        outcome: Outcome = "passed"
        message = ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]  # type: ignore[assignment]
                message = ((child.get("message") or "") + "\n" + (child.text or "")).strip()[:2000]
                break
        results.append(TestResult(test_id=_node_id(case), outcome=outcome,
                                  duration_s=float(case.get("time") or 0), message=message))
    return results


def count(results: list[TestResult]) -> dict[str, int]:
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for r in results:
        counts[r.outcome] += 1
    return counts


_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.M)
_PYTEST_SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


def parse_summary(output: str) -> dict[str, int]:
    """Counts from a unittest-style ("Ran N tests ... FAILED (failures=1)") or pytest-style summary."""
    ran = _UNITTEST_RAN.findall(output)
    if ran:
        total = int(ran[-1])
        counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        ends = _UNITTEST_END.findall(output)
        if ends and ends[-1][1]:
            for part in ends[-1][1].split(","):
                key, _, value = part.strip().partition("=")
                mapped = {"failures": "failed", "errors": "error", "skipped": "skipped"}.get(key)
                if mapped and value.isdigit():
                    counts[mapped] += int(value)
        counts["passed"] = max(0, total - counts["failed"] - counts["error"] - counts["skipped"])
        return counts
    lines = [ln for ln in output.splitlines() if _PYTEST_SUMMARY.search(ln)]
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    if lines:
        for n, word in _PYTEST_SUMMARY.findall(lines[-1]):
            key = {"errors": "error", "xfailed": "skipped", "xpassed": "passed"}.get(word, word)
            counts[key] = counts.get(key, 0) + int(n)
    return counts
