"""Summary lines: unittest's `Ran N tests` + `FAILED (...)`, pytest's `== 1 failed, 2 passed in 0.1s ==`."""
from __future__ import annotations

import re

_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.M)
_PYTEST_SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")
_PYTEST_FINAL = re.compile(r"^(?:=+ )?(?P<body>(?:\d+ \w+(?:, )?)+|no tests ran) in [\d.]+s(?: \([^)]*\))?(?: =+)?[ \t]*$",
                           re.M)
"""pytest's last line, framed (`==== 1 failed, 3 passed in 0.12s ====`) or not (-q: `3 passed in 0.12s`)."""


def parse(output: str) -> dict:
    """Counts from a unittest-style ("Ran N tests ... FAILED (failures=1)") or pytest-style summary."""
    ran = _UNITTEST_RAN.findall(output)
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    if ran:
        total = int(ran[-1])
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
    if lines:
        for n, word in _PYTEST_SUMMARY.findall(lines[-1]):
            key = {"errors": "error", "xfailed": "skipped", "xpassed": "passed"}.get(word, word)
            counts[key] = counts.get(key, 0) + int(n)
    return counts


def pytest_final(output: str) -> dict | None:
    """The counts of pytest's own last line (`==== 1 failed, 3 passed, 2 deselected in 0.12s ====`), None when
    the output has no such line (the session did not end normally)."""
    finals = list(_PYTEST_FINAL.finditer(output))
    if not finals:
        return None
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for n, word in _PYTEST_SUMMARY.findall(finals[-1].group("body")):
        key = {"errors": "error", "xfailed": "skipped", "xpassed": "passed"}.get(word, word)
        counts[key] = counts.get(key, 0) + int(n)
    return counts
