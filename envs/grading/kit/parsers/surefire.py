"""Maven Surefire's TEST-*.xml reports -> per-test results (`<class>#<method>`), and Maven's own counts."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .results import Result

HEADER = re.compile(r"^==> (?P<path>.+) <==$", re.MULTILINE)
_TESTS_RUN = re.compile(r"^\[(?:INFO|WARNING|ERROR)\] Tests run: (?P<run>\d+), Failures: (?P<failures>\d+), "
                        r"Errors: (?P<errors>\d+), Skipped: (?P<skipped>\d+)\s*$", re.M)
"""Surefire's total of a module (`[INFO] Tests run: 5, Failures: 0, Errors: 0, Skipped: 0`, no `, Time`)."""


def _outcome(case: ET.Element) -> tuple:
    for child in case:
        if child.tag in ("failure", "error", "skipped"):
            outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
            message = ((child.get("message") or "") + "\n" + (child.text or "")).strip()
            return outcome, message[:2000]
    return "passed", ""


def parse_report(text: str) -> list:
    """The test cases of one report; [] when it is not XML (a crashed fork's half-written file)."""
    try:
        root = ET.fromstring(text.strip())
    except ET.ParseError:
        return []
    out = []
    for case in root.iter("testcase"):
        classname = case.get("classname") or root.get("name") or ""
        outcome, message = _outcome(case)
        out.append(Result(f"{classname}#{case.get('name', '')}", outcome, float(case.get("time") or 0), message))
    return out


def parse(text: str) -> list:
    """Reports concatenated under `==> path <==` headers (as the runner prints them), in order."""
    bodies = HEADER.split(text)
    return [r for body in bodies[2::2] if body.strip() for r in parse_report(body)]


def totals(output: str) -> dict | None:
    """Maven's own counts summed over its modules' `Tests run:` totals; None when it printed none."""
    found = list(_TESTS_RUN.finditer(output))
    if not found:
        return None
    failed = sum(int(m["failures"]) for m in found)
    errors = sum(int(m["errors"]) for m in found)
    skipped = sum(int(m["skipped"]) for m in found)
    ran = sum(int(m["run"]) for m in found)
    return {"passed": ran - failed - errors - skipped, "failed": failed, "error": errors, "skipped": skipped}
