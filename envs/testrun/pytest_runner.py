"""pytest: JUnit XML per test, deselections as options, `--collect-only` counts."""
from __future__ import annotations

import re
import shlex
import uuid

from envs.base import Sandbox
from envs.spec import Deselection, TestRun
from envs.testrun.junit import count, parse_junit
from envs.testrun.summary import parse_summary


def pytest_args(deselected: list[Deselection], junit_path: str) -> str:
    """Options appended to a pytest command: JUnit output, no cache, the deselections."""
    args = ["-p", "no:cacheprovider", "-o", "junit_family=xunit1", f"--junitxml={junit_path}", "--color=no"]
    return " ".join(shlex.quote(a) for a in [*args, *selection_args(deselected)])


def selection_args(deselected: list[Deselection]) -> list[str]:
    """pytest options that leave out the deselected node ids (--deselect) and files (--ignore)."""
    return [f"--deselect={d.test}" if "::" in d.test else f"--ignore={d.test}" for d in deselected]


_COLLECTED = re.compile(r"^(?:(?P<selected>\d+)/)?(?P<total>\d+) tests? collected|^(?P<none>no tests) collected", re.M)


def collect(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
            env: dict[str, str] | None) -> tuple[int | None, str]:
    """How many tests the command collects with `deselected` left out, without running them."""
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


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run `command` with a JUnit report and the deselections; per-test results, else the summary line."""
    junit = f"/var/tmp/autoinstall-junit-{uuid.uuid4().hex[:8]}.xml"
    result = sandbox.exec(f"{command} {pytest_args(deselected, junit)}", timeout=timeout_s, env=env)
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=result.output[-4000:])
    try:
        run.results = parse_junit(sandbox.read_file(junit).decode("utf-8", "replace"))
        sandbox.exec(["rm", "-f", junit])
    except (FileNotFoundError, Exception):  # noqa: BLE001 - a missing or broken report means no results
        run.results = []
    # No report (e.g. the project's addopts say `-p no:junitxml`): fall back to pytest's summary line.
    run.counts = count(run.results) if run.results else parse_summary(result.output)
    run.collection_ok = result.exit_code in (0, 1, 5) and not result.timed_out
    return run
