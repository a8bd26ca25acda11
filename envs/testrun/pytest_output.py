"""What pytest's output says beyond pass/fail: tests that hung (the per-test timeout fired) and test files that
could not be collected (with the first line of why)."""
from __future__ import annotations

import ast
import re

from envs.spec import TestResult, TestRun

TIMEOUT_ENV = "AUTOINSTALL_TEST_TIMEOUT"
"""Seconds one test may run (the `autoinstall_timeout` plugin reads it; 0 or unset: no per-test timeout)."""
MAX_HANGS_ENV = "AUTOINSTALL_MAX_HANGS"
MARKER = "autoinstall-timeout:"
"""Starts the message of a test the plugin stopped (kept equal to timeout_plugin.MARKER)."""
HANG_EXIT = 86
"""The exit status of a session the plugin's watchdog ended (a test that even SIGALRM did not stop)."""

_HUNG = re.compile(re.escape(MARKER) + r" (?P<test>\S+) ran over (?P<seconds>[\d.]+) s")
_ERROR_HEADER = re.compile(r"^_{2,} ERROR collecting (?P<path>\S+) _{2,}$", re.M)
_ERROR_SUMMARY = re.compile(r"^ERROR (?P<path>[^\s:]+\.py)(?: - (?P<why>.+))?$", re.M)
_E_LINE = re.compile(r"^E +(?P<why>\S.*)$", re.M)
_EXCEPTION = re.compile(r"^[\w.]*(?:Error|Exception|Warning|Exit|Interrupt)\b")


_PROJECT_TIMEOUT = re.compile(r"Timeout \(>(?P<seconds>[\d.]+)s\) from pytest-timeout")
"""The project's own pytest-timeout stopping a test: the same evidence."""


def hung_tests(run: TestRun) -> dict[str, str]:
    """Tests the per-test timeout stopped, by id, with why (from their results, or the output the plugin's
    watchdog printed when it had to end the session)."""
    found: dict[str, str] = {}
    for result in run.results:
        if result.outcome not in ("failed", "error"):
            continue
        if match := _HUNG.search(result.message):
            found[result.test_id] = _why(match)
        elif match := _PROJECT_TIMEOUT.search(result.message):
            found[result.test_id] = f"ran over {match.group('seconds')} s (the project's pytest-timeout)"
    for match in _HUNG.finditer(run.output_tail):
        found.setdefault(match.group("test"), _why(match))
    return found


def _why(match: re.Match[str]) -> str:
    return f"ran over {match.group('seconds')} s (the per-test timeout) and was stopped"


def collection_errors(output: str) -> dict[str, str]:
    """Test files pytest could not collect -> the first line of why (`ModuleNotFoundError: No module named 'x'`).

    Read from the `ERROR collecting <path>` sections and the short summary's `ERROR <path> - <why>` lines;
    conftest.py and package __init__.py files are left out: ignoring them would change every test below them.
    """
    found: dict[str, str] = {}
    headers = list(_ERROR_HEADER.finditer(output))
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(output)
        lines = [m.group("why").strip() for m in _E_LINE.finditer(output, header.end(), end)]
        # The exception's own line (`SyntaxError: ...`) over the context a SyntaxError prints first.
        found[header.group("path")] = next((ln for ln in lines if _EXCEPTION.match(ln)), lines[0] if lines else "")
    for match in _ERROR_SUMMARY.finditer(output):
        if not found.get(match.group("path")):
            found[match.group("path")] = (match.group("why") or "").strip()
    return {path: (why or "the module failed to import")[:300] for path, why in found.items()
            if path.endswith(".py") and path.rsplit("/", 1)[-1] not in ("conftest.py", "__init__.py")}


_SECTION = re.compile(r"^_{3,} (?P<head>\S.*?) _{3,}$", re.M)
_CAPTURED = re.compile(r"^-{3,} Captured (?:stdout|stderr|log) (?:setup|call|teardown) -{3,}$", re.M)
CAPTURED_CAP = 1500
"""Characters of its own printed output a failure's message gains (its end, where errors are)."""


def _headline(test_id: str) -> str:
    """pytest's headline of a test's section in the terminal output: the node id after the file, dotted."""
    return test_id.split("::", 1)[-1].replace("::", ".")


def with_captured(results: list[TestResult], output: str) -> list[TestResult]:
    """Each failure's message with what the test printed (the `Captured stderr call` and like parts of its
    section in pytest's terminal output, which the JUnit report leaves out): a shell's `xyz: not found`, a
    tool's `Could not resolve host`. Sections are matched to results by headline, in order."""
    failing: dict[str, list[TestResult]] = {}
    for result in results:
        if result.outcome in ("failed", "error"):
            failing.setdefault(_headline(result.test_id), []).append(result)
    heads = list(_SECTION.finditer(output)) if failing else []
    seen: dict[str, int] = {}
    for i, head in enumerate(heads):
        name = re.sub(r"^ERROR at (?:setup|teardown) of ", "", head.group("head"))
        at = seen[name] = seen.get(name, -1) + 1
        if at >= len(failing.get(name, ())):
            continue
        body = output[head.end():heads[i + 1].start() if i + 1 < len(heads) else len(output)]
        body = re.split(r"^={3,}", body, maxsplit=1, flags=re.M)[0]
        printed = _CAPTURED.search(body)
        result = failing[name][at]
        lines = [ln for ln in body[printed.end():].splitlines() if ln.strip() and not _CAPTURED.match(ln)
                 and ln not in result.message] if printed else []
        if lines:
            result.message = f"{result.message}\n{chr(10).join(lines)[-CAPTURED_CAP:]}"
    return results


def static_test_count(source: str) -> int:
    """How many tests a file defines, read without importing it: `test*` functions at module level and `test*`
    methods of classes (parametrized cases count once, so it is a lower bound); at least 1."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return max(1, len(re.findall(r"^\s*(?:async\s+)?def test", source, re.M)))
    found = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found += 1
        elif isinstance(node, ast.ClassDef):
            found += sum(1 for n in node.body
                         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"))
    return max(1, found)
