"""unittest-style verbose output (`python -m unittest -v`, testtools, a TextTestRunner with verbosity=2) ->
per-test results with the dotted ids the runner accepts (`pkg.mod.Class.test_x`)."""
from __future__ import annotations

import re

from .results import Result, without_prefix

EXIT_STATUS_ID = "<exit status>"
"""The id of the error a runner's non-zero exit becomes when it reported no failing test."""
_STATUS = (r"(?P<status>ok|FAIL|ERROR|skipped(?: .*)?|skip(?: .*)?|expected failure|unexpected success"
           r"|xfail|success)")
_LINE = re.compile(r"^(?P<desc>.*?) \.\.\. ?" + _STATUS + r"\s*$")
_PENDING = re.compile(r"^(?P<desc>.*\S) \.\.\. ?(?P<output>.*)$")
_ALONE = re.compile(r"^" + _STATUS + r"\s*$")
_NAMED = re.compile(r"^(?P<name>[^\s()]+) \((?P<where>[\w.]+)\)(?P<rest>.*)$")
BARE_ID = re.compile(r"^[\w.]+(?:\([^)]*\))?$")
_SECTION = re.compile(r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<desc>.+)$")
_OUTCOMES = {"ok": "passed", "success": "passed", "FAIL": "failed", "ERROR": "error",
                                 "skipped": "skipped", "skip": "skipped", "expected failure": "skipped",
                                 "xfail": "skipped", "unexpected success": "failed"}
_RANK = {"skipped": 0, "passed": 1, "failed": 2, "error": 3}
"""The outcome a test run several times (a suite that runs twice, subtests) keeps: the worst, a pass over a skip."""
FAILED_IMPORT = "unittest.loader._FailedTest."
_RAN = re.compile(r"^Ran \d+ tests? in")


def test_id(description: str) -> str | None:
    """The dotted id in a verbose line's description, None when it names none (a docstring line)."""
    description = description.strip()
    if m := _NAMED.match(description):
        name, where = m["name"], m["where"]
        found = where if where == name or where.endswith("." + name) else f"{where}.{name}"
        return without_prefix(found, FAILED_IMPORT)
    if BARE_ID.match(description) and "." in description:
        return without_prefix(description, FAILED_IMPORT)
    return None


def _outcome(status: str) -> str:
    return _OUTCOMES.get(status, _OUTCOMES.get(status.split(" ", 1)[0], "passed"))


def _message(status: str) -> str:
    """A skip's reason (`skipped 'no network'` -> `no network`)."""
    reason = status.split(" ", 1)[1] if " " in status and status.startswith("skip") else ""
    return reason.strip().strip("'\"")


def parse_unittest_verbose(output: str) -> list:
    """Per-test results from unittest-style verbose output; a test's subtests, and its runs when the suite
    runs it more than once, fold into it (the worst outcome wins, a pass over a skip), failure and error
    sections give the messages, and a section naming no reported test (a fixture's error, a module that
    failed to import) is an error result of its own."""
    return parse_counted(output)[0]


def parse_counted(output: str) -> tuple[list, int]:
    """parse_unittest_verbose's results, and how many result lines there were (before folding)."""
    results: dict = {}
    header: str | None = None
    pending: str | None = None
    lines = output.splitlines()
    seen = 0

    def record(found: str, status: str) -> None:
        nonlocal seen
        seen += 1
        outcome = _outcome(status)
        old = results.get(found)
        if old is None or _RANK[outcome] > _RANK[old.outcome]:
            results[found] = Result(found, outcome, 0.0, _message(status))

    for line in lines:
        stripped = line.strip()
        if m := _LINE.match(stripped):
            found = test_id(m["desc"]) or header
            if found:
                record(found, m["status"])
            header = pending = None
        elif pending and (m := _ALONE.match(stripped)):
            record(pending, m["status"])
            header = pending = None
        elif (m := _PENDING.match(stripped)) and (found := test_id(m["desc"]) or header):
            pending, header = found, None
        elif stripped and not pending:
            header = test_id(stripped)
    _attach_sections(lines, results)
    return list(results.values()), seen


def _attach_sections(lines: list[str], results: dict) -> None:
    """Messages from the `FAIL: ...` / `ERROR: ...` sections after the run."""
    i = 0
    while i < len(lines):
        m = _SECTION.match(lines[i]) if i and lines[i - 1].startswith("=====") else None
        i += 1
        if m is None:
            continue
        body = []
        while i < len(lines) and not lines[i].startswith("=====") and not _RAN.match(lines[i]):
            body.append(lines[i])
            i += 1
        message = "\n".join(ln for ln in body if not ln.startswith("-----")).strip()[-2000:]
        found = test_id(m["desc"]) or m["desc"].strip()
        outcome: str = "error" if m["kind"] == "ERROR" else "failed"
        if found not in results:
            results[found] = Result(found, outcome, 0.0, message)
        elif results[found].outcome in ("failed", "error") and not results[found].message:
            results[found].message = message
