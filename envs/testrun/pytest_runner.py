"""pytest: JUnit XML per test, deselections as options, `--collect-only` counts."""
from __future__ import annotations

import re
import shlex
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

from envs.base import Sandbox, read_capped
from envs.spec import Deselection, TestResult, TestRun
from envs.testrun.junit import count, parse_junit
from envs.testrun.pytest_output import collection_errors, with_captured
from envs.testrun.summary import parse_summary

PLUGIN = "autoinstall_timeout"
"""The per-test timeout plugin's module name inside the sandbox (its source: timeout_plugin.py)."""
PLUGIN_SOURCE = (Path(__file__).parent / "timeout_plugin.py").read_bytes()
CURRENT_ENV = "AUTOINSTALL_CURRENT_TEST"
"""The plugin's variable for the file it writes each starting test's id into (timeout_plugin.CURRENT_ENV)."""
CURRENT_FILE = "current-test"
SELECT_PLUGIN = "autoinstall_reward_select"
"""The selection plugin's module name: it keeps only the tests named in $AUTOINSTALL_SELECT."""
SELECT_PLUGIN_SOURCE = (Path(__file__).parent / "select_plugin.py").read_text()
GUARD_PLUGIN = "autoinstall_guard"
"""The grader's guard in a graded run (its source: guard_plugin.py): named first, so it loads before the
agent's code can."""
GUARD_PLUGIN_SOURCE = (Path(__file__).parent / "guard_plugin.py").read_text()
GUARD_SITE_SOURCE = (Path(__file__).parent / "guard_sitecustomize.py").read_text()
"""sitecustomize.py beside the guard: every Python process of a graded run starts guarded."""
GUARD_DOCTESTS = "autoinstall_guard_doctests"
"""The guard's doctest check, beside it (its source: guard_doctests.py), imported by it when doctests are run."""
GUARD_DOCTESTS_SOURCE = (Path(__file__).parent / "guard_doctests.py").read_text()
GUARD_HANDOFFS = "autoinstall_guard_handoffs"
"""The guard's confinement of the agent's child processes, beside it (guard_handoffs.py), and the launcher."""
GUARD_HANDOFFS_SOURCE = (Path(__file__).parent / "guard_handoffs.py").read_text()
GUARD_THREADS = "autoinstall_guard_threads"
"""The guard's marking of what the agent's code hands to other threads, beside it (guard_threads.py)."""
GUARD_THREADS_SOURCE = (Path(__file__).parent / "guard_threads.py").read_text()
GUARD_COMPARISONS = "autoinstall_guard_comparisons"
"""The guard's check of the agent's "always equal" comparisons, beside it (guard_comparisons.py)."""
GUARD_COMPARISONS_SOURCE = (Path(__file__).parent / "guard_comparisons.py").read_text()


def cache_args(folder: str) -> list[str]:
    """pytest's cache in a scratch folder the caller removes, so no run leaves `.pytest_cache` in a snapshot.

    Not `-p no:cacheprovider`: that also removes the options the cache plugin adds (`--cache-clear`, `--lf`,
    `--ff`, `--nf`, and stepwise's `--sw`), and a project whose addopts use one then fails with "unrecognized
    arguments". An ini override adds no option and pytest ignores it when the project turns the plugin off."""
    return ["-o", f"cache_dir={folder}/pytest-cache"]


def pytest_args(deselected: list[Deselection], junit_path: str, scratch: str | None = None) -> str:
    """Options appended to a pytest command: JUnit output, the cache in `scratch` (default: beside the
    report), the deselections."""
    scratch = scratch or junit_path.rsplit(".", 1)[0]
    args = [*cache_args(scratch), "-o", "junit_family=xunit1", f"--junitxml={junit_path}", "--color=no"]
    return " ".join(shlex.quote(a) for a in [*args, *selection_args(deselected)])


def selection_args(deselected: list[Deselection]) -> list[str]:
    """pytest options that leave out the deselected node ids (--deselect) and files (--ignore)."""
    return [f"--deselect={d.test}" if "::" in d.test else f"--ignore={d.test}" for d in deselected]


SETTING_OPTIONS = ("-p", "-o", "--override-ini", "-W", "--pythonwarnings", "--import-mode", "--confcutdir", "-c",
                   "--config-file", "--rootdir")
"""pytest options (each with a value) that set how a run goes, not which tests it runs."""


def setting_options(command: str) -> list[str]:
    """The options of a pytest command that set how it runs (SETTING_OPTIONS, with their values): what the
    default collection's command keeps of it."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    kept, i = [], 0
    while i < len(words):
        option, _, inline = words[i].partition("=")
        if option in SETTING_OPTIONS and (inline or i + 1 < len(words)):
            kept += [words[i]] if inline else words[i:i + 2]
            i += 1 if inline else 2
            continue
        if words[i].startswith("-p") and len(words[i]) > 2 and not words[i].startswith("--"):
            kept.append(words[i])  # -pNAME
        i += 1
    return kept


_COLLECTED = re.compile(r"^(?:=+ )?(?:(?:(?P<selected>\d+)/)?(?P<total>\d+) tests? collected|(?P<none>no tests) collected)",
                        re.M)
"""pytest's count line: `835 tests collected in 0.3s`, `139/835 tests collected (696 deselected)`, `no tests
collected`; framed in `=====` when the project's addopts make --collect-only -q verbose again."""


def collect(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
            env: dict[str, str] | None) -> tuple[int | None, str]:
    """How many tests the command collects with `deselected` left out, without running them."""
    found, note, _ = collect_with_output(sandbox, command, deselected, timeout_s, env)
    return found, note


def collect_with_output(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
                        env: dict[str, str] | None) -> tuple[int | None, str, str]:
    """`collect`, and the whole output of `--collect-only` (its collection errors name the files)."""
    scratch = f"/var/tmp/autoinstall-collect-{uuid.uuid4().hex[:8]}"
    args = [*cache_args(scratch), "--collect-only", "-q", "--color=no", *selection_args(deselected)]
    result = sandbox.exec(f"{command} {' '.join(shlex.quote(a) for a in args)}", timeout=timeout_s, env=env)
    sandbox.exec(["rm", "-rf", scratch])
    found = list(_COLLECTED.finditer(result.output))
    if not found:
        tail = result.output.strip().splitlines()[-1:] or ["(no output)"]
        return (None, f"`{command} --collect-only` printed no count (exit {result.exit_code}): {tail[0][:200]}",
                result.output)
    last = found[-1]
    if last.group("none"):
        return 0, "", result.output
    return int(last.group("selected") or last.group("total")), "", result.output


def uncollectable(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
                  env: dict[str, str] | None) -> tuple[int | None, dict[str, str]]:
    """(tests collected, {test file that fails to collect: its first error line}), from `--collect-only`."""
    collected, _, output = collect_with_output(sandbox, command, deselected, timeout_s, env)
    return collected, collection_errors(output)


def select_command(command: str, select_file: str, folder: str) -> str:
    """`command` running only the ids listed in `select_file`, the selection plug-in loaded from `folder`."""
    return (f'export PYTHONPATH={folder}"${{PYTHONPATH:+:$PYTHONPATH}}" '
            f"AUTOINSTALL_SELECT={select_file}; {command} -p {SELECT_PLUGIN}")


def stop_after(command: str, failures: int) -> str:
    return f"{command} --maxfail={failures}"


def deselect_in_check(command: str, deselected: list[Deselection]) -> str:
    """A `--collect-only` check leaving out what the test run leaves out (a file deselected because it cannot be
    collected then does not fail the check either)."""
    if deselected and "--collect-only" in command:
        return " ".join([command, *(shlex.quote(a) for a in selection_args(deselected))])
    return command


def run(sandbox: Sandbox, command: str, deselected: list[Deselection], timeout_s: float,
        env: dict[str, str] | None) -> TestRun:
    """Run `command` with a JUnit report, the deselections and the per-test timeout plugin; per-test results,
    else the summary line. Without the plugin when the command cannot load it (e.g. tox's own environment)."""
    junit = f"/var/tmp/autoinstall-junit-{uuid.uuid4().hex[:8]}.xml"
    plugin_dir = f"/var/tmp/autoinstall-plugin-{uuid.uuid4().hex[:8]}"
    sandbox.write_file(f"{plugin_dir}/{PLUGIN}.py", PLUGIN_SOURCE)
    current = f"{plugin_dir}/{CURRENT_FILE}"
    with_plugin = (f"export PYTHONPATH={plugin_dir}${{PYTHONPATH:+:$PYTHONPATH}} {CURRENT_ENV}={current}; "
                   f"{command} -p {PLUGIN} {pytest_args(deselected, junit, plugin_dir)}")
    result = sandbox.exec(with_plugin, timeout=timeout_s, env=env)
    if not result.timed_out and _plugin_not_loaded(result.output):
        result = sandbox.exec(f"{command} {pytest_args(deselected, junit, plugin_dir)}", timeout=timeout_s, env=env)
    run = TestRun(exit_code=result.exit_code, duration_s=result.duration_s, timed_out=result.timed_out,
                  output_tail=result.output[-4000:], output=result.output)
    run.results, note = _read_report(sandbox, junit)
    run.results = with_captured(run.results, result.output)
    if not run.results and (result.exit_code > 128 or result.exit_code < 0) and not result.timed_out:
        run.crashed_test = _crashed_in(sandbox, current)
    if note:  # kept where the record keeps the run's output, last, so the tail shows it
        run.output = f"{run.output}\n[autoinstall] {note}"
        run.output_tail = run.output[-4000:]
    sandbox.exec(["rm", "-rf", junit, plugin_dir])  # nothing of the run stays in a snapshot
    # No report (e.g. the project's addopts say `-p no:junitxml`): fall back to pytest's summary line.
    run.counts = count(run.results) if run.results else parse_summary(result.output)
    run.collection_ok = result.exit_code in (0, 1, 5) and not result.timed_out
    return run


def _crashed_in(sandbox: Sandbox, current: str) -> str:
    """The test the per-test plugin last said was starting (a crashed process wrote no report); "" if none."""
    found = sandbox.exec(["head", "-c", "4096", current], timeout=60)
    text = found.stdout.strip() if found.ok else ""
    return text if text and "\n" not in text else ""


def _read_report(sandbox: Sandbox, junit: str) -> tuple[list[TestResult], str]:
    """The report's per-test results; none, with a note, when it is past REPORT_CAP_BYTES (a cut report would
    miscount: the summary line counts instead); none when it is missing or not JUnit XML."""
    try:
        data, note = read_capped(sandbox, junit)
        if note:
            return [], f"the JUnit report {note}: its per-test results are not read"
        text = data.decode("utf-8", "replace")
        return with_causes(parse_junit(text), text), ""
    except Exception:  # noqa: BLE001 - a missing or broken report means no results
        return [], ""


CAUSES_CAP = 2000
"""Characters of error lines a failure's message gains from its traceback."""


def with_causes(results: list[TestResult], xml_text: str) -> list[TestResult]:
    """Each failure's message with the error lines (`E   ...`) of its whole traceback: the causes of a chained
    exception (`raise DownloadError(...) from e`), which the message leaves out and the long traceback shows
    only past where a message is cut. `results` are parse_junit's, one per <testcase> in order."""
    cases = list(ET.fromstring(xml_text).iter("testcase"))
    if len(cases) != len(results):
        return results
    for case, result in zip(cases, results, strict=True):
        found = next((c for c in case if c.tag in ("failure", "error")), None)
        if found is None or result.outcome not in ("failed", "error"):
            continue
        lines = [ln[1:].strip() for ln in (found.text or "").splitlines() if ln.startswith("E ")]
        extra = "\n".join(dict.fromkeys(ln for ln in lines if ln and ln not in result.message))[:CAUSES_CAP]
        if extra:
            result.message = f"{result.message}\n{extra}"
    return results


def _plugin_not_loaded(output: str) -> bool:
    """True when pytest could not import the timeout plugin (the command runs Python without our PYTHONPATH)."""
    return bool(re.search(rf"No module named '{PLUGIN}'|Error importing plugin \"{PLUGIN}\"", output))
